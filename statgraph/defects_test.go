package statgraph_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// chat is a one-node chat graph: "reply" appends a reply to the log for
// every message in it so far.
func chat(t *testing.T, cp statgraph.Checkpointer) *statgraph.Graph[st] {
	b := statgraph.New[st]().SetReducer(appendReducer).
		AddNode("reply", func(_ context.Context, s st) (st, error) {
			return st{N: 1, Log: []string{"reply"}}, nil
		}).
		AddEdge(statgraph.Start, "reply").AddEdge("reply", statgraph.End)
	return mustCompile(t, b, statgraph.WithCheckpointer(cp))
}

// D1. Mirrors LangGraph's test_pregel.py test_invoke_checkpoint_three
// (thread memory across invocations, the chat pattern): a second invoke on a
// finished thread adds its input to the thread's state through the reducer.
func TestInvokeOnFinishedThreadMergesInputThroughReducer(t *testing.T) {
	savers(t, func(t *testing.T, cp statgraph.Checkpointer) {
		g := chat(t, cp)
		ctx := context.Background()
		_, err := g.Invoke(ctx, st{Log: []string{"hi"}}, statgraph.WithThread("chat"))
		require.NoError(t, err)
		out, err := g.Invoke(ctx, st{Log: []string{"how are you"}}, statgraph.WithThread("chat"))
		require.NoError(t, err)
		require.Equal(t, []string{"hi", "reply", "how are you", "reply"}, out.Log)
		require.Equal(t, 2, out.N)
	})
}

// D1, unfinished thread: the input is merged through the reducer before the
// pending nodes continue (documented on WithThread).
func TestInvokeOnUnfinishedThreadMergesInputThenContinues(t *testing.T) {
	fail := true
	b := statgraph.New[st]().SetReducer(appendReducer).
		AddNode("a", func(context.Context, st) (st, error) { return st{Log: []string{"a"}}, nil }).
		AddNode("b", func(_ context.Context, s st) (st, error) {
			if fail {
				return st{}, errors.New("b is broken")
			}
			return st{Log: []string{"b saw " + s.Log[len(s.Log)-1]}}, nil
		}).
		AddEdge(statgraph.Start, "a").AddEdge("a", "b").AddEdge("b", statgraph.End)
	g := mustCompile(t, b, statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(false)))
	ctx := context.Background()
	_, err := g.Invoke(ctx, st{Log: []string{"in"}}, statgraph.WithThread("u"))
	require.ErrorContains(t, err, "b is broken")
	fail = false
	out, err := g.Invoke(ctx, st{Log: []string{"more"}}, statgraph.WithThread("u"))
	require.NoError(t, err)
	require.Equal(t, []string{"in", "a", "more", "b saw more"}, out.Log)
}

// D2. Mirrors LangGraph's interrupt_after / interrupt_before as seen in
// get_state_history (test_pregel.py test_command_with_static_breakpoints
// checks the history around static breakpoints): the pause is recorded on
// the step's own checkpoint, so History holds one snapshot per step.
func TestInterruptAfterWritesOneCheckpointPerStep(t *testing.T) {
	var calls counter
	fail := false
	g := mustCompile(t, chain(&calls, &fail), statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(false)),
		statgraph.WithInterruptAfter("a"), statgraph.WithInterruptBefore("c"))
	ctx := context.Background()
	_, err := g.Invoke(ctx, st{}, statgraph.WithThread("d2"))
	require.ErrorIs(t, err, statgraph.ErrInterrupted)
	_, err = g.Invoke(ctx, st{}, statgraph.WithThread("d2"), statgraph.WithResume(nil))
	require.ErrorIs(t, err, statgraph.ErrInterrupted)
	_, err = g.Invoke(ctx, st{}, statgraph.WithThread("d2"), statgraph.WithResume(nil))
	require.NoError(t, err)
	hist, err := g.History(ctx, "d2", 0, 0)
	require.NoError(t, err)
	steps := map[int]int{}
	for _, s := range hist {
		steps[s.Step]++
	}
	require.Equal(t, map[int]int{0: 1, 1: 1, 2: 1, 3: 1}, steps, "one snapshot per step")
	require.Equal(t, "after", hist[2].Interrupts[0].When)  // step 1
	require.Equal(t, "before", hist[1].Interrupts[0].When) // step 2
}

// D3. Mirrors LangGraph's update_state(config, values, as_node=END):
// UpdateState(..., End) dismisses the pending interrupt and finishes the
// thread.
func TestUpdateStateAsEndFinishesTheThread(t *testing.T) {
	var calls counter
	fail := false
	g := mustCompile(t, chain(&calls, &fail), statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(false)),
		statgraph.WithInterruptBefore("b"))
	ctx := context.Background()
	_, err := g.Invoke(ctx, st{}, statgraph.WithThread("d3"))
	require.ErrorIs(t, err, statgraph.ErrInterrupted)
	_, err = g.UpdateState(ctx, "d3", st{N: 7, Log: []string{"final"}}, statgraph.End)
	require.NoError(t, err)
	snap, err := g.State(ctx, "d3")
	require.NoError(t, err)
	require.Empty(t, snap.Next)
	require.Empty(t, snap.Interrupts)
	require.Equal(t, 7, snap.State.N)
	_, err = g.Invoke(ctx, st{}, statgraph.WithThread("d3"), statgraph.WithResume(nil))
	require.ErrorIs(t, err, statgraph.ErrNotInterrupted)
	require.Equal(t, 0, calls.get("b"))
}

// D4. Mirrors LangGraph's step_timeout tests (test_pregel_async.py
// test_step_timeout_on_stream_hang): a node that ignores its ctx and returns
// after its deadline has its result refused.
func TestLateResultAfterTimeoutIsRefused(t *testing.T) {
	b := statgraph.New[st]().
		AddNode("slow", func(ctx context.Context, _ st) (st, error) {
			<-ctx.Done() // a result that comes after the deadline, whatever the load
			return st{N: 1}, nil
		}, statgraph.WithTimeout(5*time.Millisecond)).
		AddEdge(statgraph.Start, "slow").AddEdge("slow", statgraph.End)
	g := mustCompile(t, b)
	out, err := g.Invoke(context.Background(), st{})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var ne *statgraph.NodeError
	require.ErrorAs(t, err, &ne)
	require.Equal(t, "slow", ne.Node)
	require.ErrorContains(t, err, "WithTimeout")
	require.Zero(t, out.N)
}

// Mirrors LangGraph's RemainingSteps managed value
// (langgraph.managed.is_last_step): a looping node sees the steps left.
func TestRemainingStepsReadableByNode(t *testing.T) {
	var seen []int
	b := statgraph.New[st]().
		AddNode("loop", func(ctx context.Context, s st) (st, error) {
			seen = append(seen, statgraph.RuntimeOf(ctx).RemainingSteps)
			s.N++
			return s, nil
		}).
		AddEdge(statgraph.Start, "loop").
		AddConditionalEdges("loop", func(ctx context.Context, s st) string {
			if s.N >= 3 {
				return "done"
			}
			return "again"
		}, map[string]string{"again": "loop", "done": statgraph.End})
	g := mustCompile(t, b)
	_, err := g.Invoke(context.Background(), st{}, statgraph.WithStepLimit(5))
	require.NoError(t, err)
	require.Equal(t, []int{4, 3, 2}, seen)
	require.Equal(t, statgraph.Runtime{}, statgraph.RuntimeOf(context.Background()), "outside a node every field is zero")
}

// savers runs f against both kinds of memory checkpointer: one that keeps
// values and one that encodes them as a store does.
func savers(t *testing.T, f func(t *testing.T, cp statgraph.Checkpointer)) {
	t.Run("values", func(t *testing.T) { f(t, statgraph.NewMemoryCheckpointer(false)) })
	t.Run("encoded", func(t *testing.T) { f(t, statgraph.NewMemoryCheckpointer(true)) })
}

// chain builds Start -> a -> b -> c -> End where b fails while *failB is set.
func chain(calls *counter, failB *bool) *statgraph.Builder[st] {
	node := func(name string) func(context.Context, st) (st, error) {
		return func(_ context.Context, s st) (st, error) {
			calls.inc(name)
			if name == "b" && *failB {
				return s, errors.New("b is broken")
			}
			s.N++
			s.Log = append(s.Log, name)
			return s, nil
		}
	}
	return statgraph.New[st]().AddNode("a", node("a")).AddNode("b", node("b")).AddNode("c", node("c")).
		AddEdge(statgraph.Start, "a").AddEdge("a", "b").AddEdge("b", "c").AddEdge("c", statgraph.End)
}
