package statgraph_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// The regression tests of what the differential test found, each with the
// seed that showed it.

// TestFirstStepMergesInNodeNameOrder checks that the first step's updates
// merge in node-name order, as every later step's do, when Start has both
// a plain edge and a router (seed 42: Start -> n2 and a router from Start
// choosing n1; the engine merged n2's update before n1's, and its
// EventStepStart listed [n2 n1]).
func TestFirstStepMergesInNodeNameOrder(t *testing.T) {
	type log struct{ Names []string }
	b := statgraph.New[log]().SetReducer(func(cur, u log) log { return log{statgraph.Append(cur.Names, u.Names)} })
	for _, name := range []string{"b", "a"} {
		b.AddNode(name, func(context.Context, log) (log, error) { return log{[]string{name}}, nil }).AddEdge(name, statgraph.End)
	}
	g, err := b.AddEdge(statgraph.Start, "b").
		AddRoutes(statgraph.Start, func(context.Context, log) []string { return []string{"a"} }, map[string]string{"a": "a"}).
		Compile()
	require.NoError(t, err)
	var first []string
	for ev, err := range g.Stream(context.Background(), log{}, statgraph.WithEvents(statgraph.EventStepStart)) {
		require.NoError(t, err)
		if ev.Kind == statgraph.EventStepStart && first == nil {
			first = ev.Nodes
		}
	}
	require.Equal(t, []string{"a", "b"}, first)
	out, err := g.Invoke(context.Background(), log{})
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, out.Names)
	requireSeed(t, 42)
}

// TestRetryInParallelStepReportsEveryAttemptStart checks that a retried
// node in a step of several tasks reports the start of each attempt, as it
// does running alone (EventNodeStart is "a node attempt starts"; seed 4:
// the parallel step reported one start for two attempts).
func TestRetryInParallelStepReportsEveryAttemptStart(t *testing.T) {
	var calls atomic.Int32
	b := statgraph.New[fzState]().SetReducer(fzReduce).
		AddNode("a", func(ctx context.Context, in fzState) (fzState, error) {
			if calls.Add(1) == 1 {
				return fzState{}, errInjected
			}
			return fzState{Sum: 1}, nil
		}, statgraph.WithRetry(statgraph.RetryPolicy{MaxAttempts: 2, InitialInterval: time.Microsecond})).
		AddNode("b", func(context.Context, fzState) (fzState, error) { return fzState{Sum: 1}, nil }).
		AddEdge(statgraph.Start, "a").AddEdge(statgraph.Start, "b").AddEdge("a", statgraph.End).AddEdge("b", statgraph.End)
	g, err := b.Compile()
	require.NoError(t, err)
	var starts []string
	for ev, err := range g.Stream(context.Background(), fzState{}, statgraph.WithEvents(statgraph.EventNodeStart)) {
		require.NoError(t, err)
		if ev.Kind == statgraph.EventNodeStart {
			starts = append(starts, fmt.Sprintf("%s#%d", ev.Node, ev.Attempt))
		}
	}
	slices.Sort(starts)
	require.Equal(t, []string{"a#1", "a#2", "b#1"}, starts)
	requireSeed(t, 4)
}

// TestHandledFailureNotRunAgainOnResume checks that a node whose failure
// its WithFallback handled is not run again (with its retries) when its
// step is resumed after a sibling's Interrupt: its failure is saved with
// the step's pending writes like a finished sibling's update (LangGraph's
// test_pending_writes_resume: finished tasks are not re-run; seed 33).
func TestHandledFailureNotRunAgainOnResume(t *testing.T) {
	for _, mode := range []statgraph.Durability{statgraph.DurabilitySync, statgraph.DurabilityAsync, statgraph.DurabilityExit} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			var failed atomic.Int32
			var seen error
			g, err := statgraph.New[fzState]().SetReducer(fzReduce).
				AddNode("ask", func(ctx context.Context, in fzState) (fzState, error) {
					v, err := statgraph.Interrupt[int](ctx, "ok?")
					return fzState{Sum: v}, err
				}).
				AddNode("bad", func(context.Context, fzState) (fzState, error) {
					failed.Add(1)
					return fzState{}, errInjected
				}, statgraph.WithFallback("handler")).
				AddNode("handler", func(ctx context.Context, in fzState) (fzState, error) {
					seen = statgraph.RuntimeOf(ctx).Fallback
					return fzState{Log: []string{"handled"}}, nil
				}).
				AddEdge(statgraph.Start, "ask").AddEdge(statgraph.Start, "bad").
				AddEdge("ask", statgraph.End).AddEdge("bad", statgraph.End).AddEdge("handler", statgraph.End).
				Compile(statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(true)))
			require.NoError(t, err)
			ctx := context.Background()
			opts := []statgraph.RunOption{statgraph.WithThread("t"), statgraph.WithDurability(mode)}
			_, err = g.Invoke(ctx, fzState{}, opts...)
			require.ErrorIs(t, err, statgraph.ErrInterrupted)
			out, err := g.Resume(ctx, 5, opts...)
			require.NoError(t, err)
			require.Equal(t, fzState{Log: []string{"handled"}, Sum: 5}, out)
			require.Equal(t, int32(1), failed.Load(), "the failed node ran again on resume")
			var ne *statgraph.NodeError
			require.ErrorAs(t, seen, &ne)
			require.Equal(t, "bad", ne.Node)
		})
	}
	requireSeed(t, 33)
}

// TestDeferredNodeHeldFromStart checks that a WithDefer node Start reaches
// waits while other tasks are due, as it does after every step (seed 40:
// Start -> n2, n3 (deferred) and a Send; n3 ran in the first step).
func TestDeferredNodeHeldFromStart(t *testing.T) {
	g, err := statgraph.New[fzState]().SetReducer(fzReduce).
		AddNode("a", func(context.Context, fzState) (fzState, error) { return fzState{Log: []string{"a"}}, nil }).
		AddNode("b", func(context.Context, fzState) (fzState, error) { return fzState{Log: []string{"b"}}, nil }).
		AddNode("last", func(context.Context, fzState) (fzState, error) { return fzState{Log: []string{"last"}}, nil }, statgraph.WithDefer()).
		AddEdge(statgraph.Start, "a").AddEdge(statgraph.Start, "last").AddEdge("a", "b").
		AddEdge("b", statgraph.End).AddEdge("last", statgraph.End).
		Compile()
	require.NoError(t, err)
	out, err := g.Invoke(context.Background(), fzState{})
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "last"}, out.Log)
	requireSeed(t, 40)
}

// TestCommandSendsAfterFanOutOfASentNode checks the documented order of a
// command node's Sends, after those of its own fan-out (AddSends), when the
// node ran as a Send (seed 93: they were queued before them).
func TestCommandSendsAfterFanOutOfASentNode(t *testing.T) {
	leaf := func(_ context.Context, in fzState) (fzState, error) { return fzState{Log: in.Log}, nil }
	g, err := statgraph.New[fzState]().SetReducer(fzReduce).
		AddNode("leaf", leaf).AddEdge("leaf", statgraph.End).
		AddCommandNode("cmd", func(_ context.Context, in fzState) (statgraph.Command[fzState], error) {
			return statgraph.Command[fzState]{Sends: []statgraph.Send[fzState]{{To: "leaf", Input: fzState{Log: []string{"command"}}}}}, nil
		}, []string{"leaf", statgraph.End}).
		AddSends("cmd", func(context.Context, fzState) []statgraph.Send[fzState] {
			return []statgraph.Send[fzState]{{To: "leaf", Input: fzState{Log: []string{"fan-out"}}}}
		}, "leaf").
		AddSends(statgraph.Start, func(context.Context, fzState) []statgraph.Send[fzState] {
			return []statgraph.Send[fzState]{{To: "cmd"}}
		}, "cmd").
		Compile()
	require.NoError(t, err)
	out, err := g.Invoke(context.Background(), fzState{})
	require.NoError(t, err)
	require.Equal(t, []string{"fan-out", "command"}, out.Log)
	requireSeed(t, 93)
}

// TestInterruptAfterANodeRunAsASend checks that WithInterruptAfter pauses
// after a node that ran as a Send, as WithInterruptBefore pauses before one
// (seed 117: no pause).
func TestInterruptAfterANodeRunAsASend(t *testing.T) {
	var ran []string
	node := func(name string) func(context.Context, fzState) (fzState, error) {
		return func(context.Context, fzState) (fzState, error) { ran = append(ran, name); return fzState{}, nil }
	}
	g, err := statgraph.New[fzState]().SetReducer(fzReduce).
		AddNode("worker", node("worker")).AddNode("next", node("next")).
		AddEdge("worker", "next").AddEdge("next", statgraph.End).
		AddSends(statgraph.Start, func(context.Context, fzState) []statgraph.Send[fzState] {
			return []statgraph.Send[fzState]{{To: "worker"}}
		}, "worker").
		Compile(statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(false)), statgraph.WithInterruptAfter("worker"))
	require.NoError(t, err)
	var res statgraph.Result[fzState]
	_, err = g.Invoke(context.Background(), fzState{}, statgraph.WithThread("t"), statgraph.WithResult(&res))
	require.ErrorIs(t, err, statgraph.ErrInterrupted)
	require.Equal(t, []string{"worker"}, ran)
	require.Equal(t, "worker:after:1", res.Interrupts[0].ID)
	_, err = g.Resume(context.Background(), nil, statgraph.WithThread("t"))
	require.NoError(t, err)
	require.Equal(t, []string{"worker", "next"}, ran)
	requireSeed(t, 117)
}

// requireSeed checks the generated graph that showed a defect.
func requireSeed(t *testing.T, seed uint64) {
	t.Helper()
	compiled, err := checkSeedErr(seed)
	require.True(t, compiled)
	require.NoError(t, err)
}
