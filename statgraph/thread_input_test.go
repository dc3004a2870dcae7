package statgraph_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// The branches of WithThread's doc for a thread whose run is unfinished,
// on a graph without a reducer: new input cannot be merged, so a thread
// whose run failed is continued from its checkpoint with the input ignored,
// and a thread paused at an interrupt refuses the run (ErrInterrupted)
// without changing anything.

// Mirrors LangGraph's test_pregel.py test_checkpoint_recovery (a failed run
// invoked again with new input) on a graph without a reducer. LangGraph
// always applies the input, every state key being a channel with a
// reducer (last value by default); statgraph without a reducer has no way
// to merge it and documents that it is ignored: the pending node runs on
// the checkpoint's state, and nothing that finished runs again.
func TestInvokeOnFailedThreadWithoutReducerIgnoresInput(t *testing.T) {
	savers(t, func(t *testing.T, cp statgraph.Checkpointer) {
		var calls counter
		fail := true
		g := mustCompile(t, chain(&calls, &fail), statgraph.WithCheckpointer(cp))
		ctx := context.Background()
		_, err := g.Invoke(ctx, st{N: 10, Log: []string{"in"}}, statgraph.WithThread("u"))
		require.ErrorContains(t, err, "b is broken")

		fail = false
		out, err := g.Invoke(ctx, st{N: 999, Log: []string{"new"}}, statgraph.WithThread("u"))
		require.NoError(t, err)
		require.Equal(t, st{N: 13, Log: []string{"in", "a", "b", "c"}}, out,
			"b continued on the checkpoint's state; the new input was ignored")
		require.Equal(t, 1, calls.get("a"))
		require.Equal(t, 2, calls.get("b"))
		snap, err := g.State(ctx, "u")
		require.NoError(t, err)
		require.Equal(t, out, snap.State)
	})
}

// A thread paused at an interrupt, invoked with new input and no
// WithResume, on a graph without a reducer. LangGraph (pregel/_loop.py,
// "discard any unfinished tasks from previous checkpoint") drops the
// pause and starts over from the input; statgraph documents an error
// instead, so that a pending question is not skipped by accident: the
// error wraps ErrInterrupted, no checkpoint is written, no node runs, and
// the pause still resumes on the state it was saved with.
func TestInvokeOnPausedThreadWithoutReducerRefusesInput(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   []statgraph.CompileOption
		inside bool // Interrupt inside node b instead of b being plain
		want   []string
	}{
		{"Interrupt inside b", nil, true, []string{"in", "a", "answer:yes", "c"}},
		{"WithInterruptBefore b", []statgraph.CompileOption{statgraph.WithInterruptBefore("b")}, false, []string{"in", "a", "b", "c"}},
		{"WithInterruptAfter a", []statgraph.CompileOption{statgraph.WithInterruptAfter("a")}, false, []string{"in", "a", "b", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			savers(t, func(t *testing.T, cp statgraph.Checkpointer) {
				var calls counter
				b := statgraph.New[st]().AddNode("a", counted(&calls, "a")).AddNode("c", counted(&calls, "c")).
					AddEdge(statgraph.Start, "a").AddEdge("a", "b").AddEdge("b", "c").AddEdge("c", statgraph.End)
				if tc.inside {
					b.AddNode("b", func(ctx context.Context, s st) (st, error) {
						calls.inc("b")
						answer, err := statgraph.Interrupt[string](ctx, "go on?")
						if err != nil {
							return s, err
						}
						s.Log = append(s.Log, "answer:"+answer)
						return s, nil
					})
				} else {
					b.AddNode("b", counted(&calls, "b"))
				}
				g := mustCompile(t, b, append(tc.opts, statgraph.WithCheckpointer(cp))...)
				ctx := context.Background()
				_, err := g.Invoke(ctx, st{Log: []string{"in"}}, statgraph.WithThread("p"))
				require.ErrorIs(t, err, statgraph.ErrInterrupted)
				before, err := g.History(ctx, "p", 0, 0)
				require.NoError(t, err)
				ran := map[string]int{"a": calls.get("a"), "b": calls.get("b"), "c": calls.get("c")}

				_, err = g.Invoke(ctx, st{N: 999, Log: []string{"new"}}, statgraph.WithThread("p"))
				require.ErrorIs(t, err, statgraph.ErrInterrupted)
				require.ErrorContains(t, err, "continue it with WithResume(value)")
				after, err := g.History(ctx, "p", 0, 0)
				require.NoError(t, err)
				require.Equal(t, before, after, "the refused run wrote no checkpoint")
				require.Equal(t, ran, map[string]int{"a": calls.get("a"), "b": calls.get("b"), "c": calls.get("c")}, "the refused run ran no node")

				out, err := g.Invoke(ctx, st{}, statgraph.WithThread("p"), statgraph.WithResume("yes"))
				require.NoError(t, err)
				require.Equal(t, tc.want, out.Log, "the pause resumed on the state it was saved with")
				require.Equal(t, 1, calls.get("a"))
			})
		})
	}
}

// counted is a node that counts its runs in calls and appends its name to
// the log.
func counted(calls *counter, name string) func(context.Context, st) (st, error) {
	return func(_ context.Context, s st) (st, error) {
		calls.inc(name)
		s.Log = append(s.Log, name)
		return s, nil
	}
}
