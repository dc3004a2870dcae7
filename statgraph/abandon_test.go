package statgraph_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

type ab struct{ Log []string }

func abReduce(cur, u ab) ab { return ab{Log: statgraph.Append(cur.Log, u.Log)} }

// TestAbandonedChildWritesNoCheckpoint: a subgraph node abandoned at its
// WithTimeout deadline stops writing into the thread. The child's slow
// node ignores its ctx on the first call and returns "late" only after
// the parent's run has failed; its run's checkpoint of that step would
// say the child finished, and the parent, continued, would take "late"
// from it without running the child again. The late write is refused:
// the thread keeps only what the parent waited for, and the continued
// run runs the child's node again ("second").
func TestAbandonedChildWritesNoCheckpoint(t *testing.T) {
	for _, encode := range []bool{false, true} {
		t.Run(map[bool]string{false: "values", true: "encoded"}[encode], func(t *testing.T) {
			release := make(chan struct{})
			var calls atomic.Int32
			child := mustCompile(t, statgraph.New[ab]().SetReducer(abReduce).
				AddNode("slow", func(context.Context, ab) (ab, error) {
					if calls.Add(1) == 1 {
						<-release // ignores its ctx
						return ab{Log: []string{"late"}}, nil
					}
					return ab{Log: []string{"second"}}, nil
				}).
				AddEdge(statgraph.Start, "slow").AddEdge("slow", statgraph.End))
			cp := statgraph.NewMemoryCheckpointer(encode)
			g := mustCompile(t, statgraph.AddSubgraph(statgraph.New[ab]().SetReducer(abReduce), "sub", child,
				func(ab) ab { return ab{} }, func(_ ab, c ab) ab { return ab{Log: c.Log} },
				statgraph.WithTimeout(500*time.Millisecond)).
				AddEdge(statgraph.Start, "sub").AddEdge("sub", statgraph.End),
				statgraph.WithCheckpointer(cp))
			ctx := context.Background()
			before := runtime.NumGoroutine()
			_, err := g.Invoke(ctx, ab{Log: []string{"in"}}, statgraph.WithThread("t"))
			require.ErrorContains(t, err, "WithTimeout(500ms) deadline")
			require.EqualValues(t, 1, calls.Load(), "the child's node did not start before the deadline")
			childThread := "t|sub:0"
			was, err := cp.Range(ctx, childThread, 0, 0, 0)
			require.NoError(t, err)

			close(release)
			// The abandoned attempt's goroutine ends once the child's run
			// returned, its late write tried.
			deadline := time.Now().Add(30 * time.Second)
			for runtime.NumGoroutine() > before {
				require.True(t, time.Now().Before(deadline), "the abandoned child did not end")
				time.Sleep(time.Millisecond)
			}
			now, err := cp.Range(ctx, childThread, 0, 0, 0)
			require.NoError(t, err)
			require.Len(t, now, len(was), "the abandoned child wrote into %s after its parent gave up on it", childThread)

			out, err := g.Invoke(ctx, ab{}, statgraph.WithThread("t"))
			require.NoError(t, err)
			require.Equal(t, []string{"in", "second"}, out.Log)
		})
	}
}

// TestRetriedSubgraphNodeContinuesItsChild: when a subgraph node fails and
// its retry policy runs it again, the child's run continues from its own
// latest checkpoint, as LangGraph's run_with_retry does (it sets
// CONFIG_KEY_RESUMING on the retry so that the subgraph resumes;
// pregel/_retry.py, exercised by test_pregel.py's
// test_checkpoint_recovery for a failed step run again): the child's
// finished step ("a") is not run again, its failed node ("b") is, the
// result holds each once (not the failed attempt's partial state), and
// the child thread's checkpoints form one history whose last is finished.
func TestRetriedSubgraphNodeContinuesItsChild(t *testing.T) {
	var as, bs atomic.Int32
	child := mustCompile(t, statgraph.New[ab]().SetReducer(abReduce).
		AddNode("a", func(context.Context, ab) (ab, error) { as.Add(1); return ab{Log: []string{"a"}}, nil }).
		AddNode("b", func(context.Context, ab) (ab, error) {
			if bs.Add(1) == 1 {
				return ab{Log: []string{"partial"}}, errors.New("b fails once")
			}
			return ab{Log: []string{"b"}}, nil
		}).
		AddEdge(statgraph.Start, "a").AddEdge("a", "b").AddEdge("b", statgraph.End))
	cp := statgraph.NewMemoryCheckpointer(true)
	g := mustCompile(t, statgraph.AddSubgraph(statgraph.New[ab]().SetReducer(abReduce), "sub", child,
		func(ab) ab { return ab{} }, func(_ ab, c ab) ab { return ab{Log: c.Log} },
		statgraph.WithRetry(statgraph.RetryPolicy{InitialInterval: time.Millisecond, MaxAttempts: 2})).
		AddEdge(statgraph.Start, "sub").AddEdge("sub", statgraph.End),
		statgraph.WithCheckpointer(cp))
	ctx := context.Background()
	out, err := g.Invoke(ctx, ab{Log: []string{"in"}}, statgraph.WithThread("t"))
	require.NoError(t, err)
	require.Equal(t, []string{"in", "a", "b"}, out.Log)
	require.EqualValues(t, 1, as.Load(), "the child's finished step ran again")
	require.EqualValues(t, 2, bs.Load())
	hist, err := cp.Range(ctx, "t|sub:0", 0, 0, 0)
	require.NoError(t, err)
	require.NotEmpty(t, hist)
	require.Empty(t, hist[0].Next, "the child's latest checkpoint is not finished")
	for i := 1; i < len(hist); i++ {
		require.Equal(t, hist[i].ID, hist[i-1].Parent, "the child's history is not one chain")
	}
}
