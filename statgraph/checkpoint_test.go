package statgraph_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// counter counts node executions by name; safe for parallel nodes.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) inc(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[name]++
	return c.n[name]
}

func (c *counter) get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

// savers runs a test against the value-keeping and the encoding memory
// checkpointer.
func savers(t *testing.T, f func(t *testing.T, cp statgraph.Checkpointer)) {
	t.Run("values", func(t *testing.T) { f(t, statgraph.NewMemoryCheckpointer()) })
	t.Run("encoded", func(t *testing.T) { f(t, &statgraph.MemoryCheckpointer{Encode: true}) })
}

// chain builds Start -> a -> b -> c -> End where b fails while *failB is set.
func chain(calls *counter, failB *bool) *statgraph.Builder[st] {
	node := func(name string) statgraph.NodeFunc[st] {
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

func TestResumeAfterFailureDoesNotRerunCompletedNodes(t *testing.T) {
	savers(t, func(t *testing.T, cp statgraph.Checkpointer) {
		var calls counter
		fail := true
		g := mustCompile(t, chain(&calls, &fail), statgraph.WithCheckpointer(cp))
		ctx := context.Background()
		_, err := g.Invoke(ctx, st{}, statgraph.WithThread("t1"))
		require.ErrorContains(t, err, "b is broken")

		snap, err := g.State(ctx, "t1")
		require.NoError(t, err)
		require.Equal(t, []string{"b"}, snap.Next)
		require.Equal(t, []string{"a"}, snap.State.Log)

		fail = false
		out, err := g.Invoke(ctx, st{N: 999}, statgraph.WithThread("t1"))
		require.NoError(t, err)
		require.Equal(t, []string{"a", "b", "c"}, out.Log)
		require.Equal(t, 3, out.N)
		require.Equal(t, 1, calls.get("a"))
		require.Equal(t, 2, calls.get("b"))
		require.Equal(t, 1, calls.get("c"))

		// The run is finished: a new Invoke on the thread starts afresh.
		out, err = g.Invoke(ctx, st{}, statgraph.WithThread("t1"))
		require.NoError(t, err)
		require.Equal(t, []string{"a", "b", "c"}, out.Log)
		require.Equal(t, 2, calls.get("a"))
	})
}

func TestParallelFailureThenResumeRerunsOnlyTheFailedNode(t *testing.T) {
	savers(t, func(t *testing.T, cp statgraph.Checkpointer) {
		var calls counter
		fail := true
		b := statgraph.New[st]().SetReducer(appendReducer)
		for _, name := range []string{"p1", "p2", "p3"} {
			b.AddNode(name, func(context.Context, st) (st, error) {
				calls.inc(name)
				if name == "p2" && fail {
					return st{}, errors.New("p2 flaked")
				}
				return st{N: 1, Log: []string{name}}, nil
			}).AddEdge(statgraph.Start, name).AddEdge(name, "join")
		}
		b.AddNode("join", func(_ context.Context, s st) (st, error) {
			calls.inc("join")
			return st{Log: []string{"join"}}, nil
		}).AddEdge("join", statgraph.End)
		g := mustCompile(t, b, statgraph.WithCheckpointer(cp))
		ctx := context.Background()
		_, err := g.Invoke(ctx, st{}, statgraph.WithThread("par"))
		require.ErrorContains(t, err, "p2 flaked")
		fail = false
		out, err := g.Invoke(ctx, st{}, statgraph.WithThread("par"))
		require.NoError(t, err)
		require.Equal(t, []string{"p1", "p2", "p3", "join"}, out.Log)
		require.Equal(t, 3, out.N)
		require.Equal(t, 1, calls.get("p1"))
		require.Equal(t, 2, calls.get("p2"))
		require.Equal(t, 1, calls.get("p3"))
		require.Equal(t, 1, calls.get("join"))
	})
}

func TestThreadOptionsNeedACheckpointer(t *testing.T) {
	g := mustCompile(t, oneNode(step("n")))
	_, err := g.Invoke(context.Background(), st{}, statgraph.WithThread("x"))
	require.ErrorIs(t, err, statgraph.ErrNoCheckpointer)
	_, err = g.Resume(context.Background(), "x", 1)
	require.ErrorIs(t, err, statgraph.ErrNoCheckpointer)
	_, err = g.History(context.Background(), "x", 0)
	require.ErrorIs(t, err, statgraph.ErrNoCheckpointer)

	g2 := mustCompile(t, oneNode(step("n")), statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer()))
	_, err = g2.Invoke(context.Background(), st{})
	require.ErrorContains(t, err, "pass WithThread(id)")
}

func approver(calls *counter) statgraph.NodeFunc[st] {
	return func(ctx context.Context, s st) (st, error) {
		calls.inc("approve")
		answer, err := statgraph.Interrupt[string](ctx, map[string]any{"question": "ship it?", "n": s.N})
		if err != nil {
			return s, err
		}
		s.Log = append(s.Log, "answer:"+answer)
		return s, nil
	}
}

func TestInterruptInsideNodeThenResumeWithValue(t *testing.T) {
	savers(t, func(t *testing.T, cp statgraph.Checkpointer) {
		var calls counter
		g := mustCompile(t, statgraph.New[st]().AddNode("prep", step("prep")).AddNode("approve", approver(&calls)).
			AddNode("ship", step("ship")).
			AddEdge(statgraph.Start, "prep").AddEdge("prep", "approve").AddEdge("approve", "ship").AddEdge("ship", statgraph.End),
			statgraph.WithCheckpointer(cp))
		ctx := context.Background()
		_, err := g.Invoke(ctx, st{}, statgraph.WithThread("h"))
		var ie *statgraph.InterruptedError
		require.ErrorAs(t, err, &ie)
		require.ErrorIs(t, err, statgraph.ErrInterrupted)
		require.Len(t, ie.Interrupts, 1)
		require.Equal(t, "approve", ie.Interrupts[0].Node)
		require.JSONEq(t, `{"question":"ship it?","n":1}`, string(ie.Interrupts[0].Payload))

		// Invoking again does not skip the question.
		_, err = g.Invoke(ctx, st{}, statgraph.WithThread("h"))
		require.ErrorIs(t, err, statgraph.ErrInterrupted)
		require.ErrorContains(t, err, "continue it with Resume")

		out, err := g.Resume(ctx, "h", "yes")
		require.NoError(t, err)
		require.Equal(t, []string{"prep", "answer:yes", "ship"}, out.Log)
		require.Equal(t, 2, calls.get("approve"), "the node re-runs from its start on resume")

		_, err = g.Resume(ctx, "h", "again")
		require.ErrorIs(t, err, statgraph.ErrNotInterrupted)
	})
}

func TestInterruptWithoutCheckpointerIsAClearError(t *testing.T) {
	var calls counter
	g := mustCompile(t, oneNode(approver(&calls)))
	_, err := g.Invoke(context.Background(), st{})
	require.ErrorIs(t, err, statgraph.ErrNoCheckpointer)
	require.ErrorContains(t, err, `node "n" called Interrupt`)
}

func TestTwoInterruptsInOneStepResumedByID(t *testing.T) {
	savers(t, func(t *testing.T, cp statgraph.Checkpointer) {
		b := statgraph.New[st]().SetReducer(appendReducer)
		for _, name := range []string{"left", "right"} {
			b.AddNode(name, func(ctx context.Context, s st) (st, error) {
				v, err := statgraph.Interrupt[int](ctx, name)
				if err != nil {
					return st{}, err
				}
				return st{N: v, Log: []string{name}}, nil
			}).AddEdge(statgraph.Start, name).AddEdge(name, statgraph.End)
		}
		g := mustCompile(t, b, statgraph.WithCheckpointer(cp))
		ctx := context.Background()
		_, err := g.Invoke(ctx, st{}, statgraph.WithThread("two"))
		var ie *statgraph.InterruptedError
		require.ErrorAs(t, err, &ie)
		require.Len(t, ie.Interrupts, 2)
		ids := map[string]string{}
		for _, in := range ie.Interrupts {
			ids[in.Node] = in.ID
		}

		_, err = g.Resume(ctx, "two", 5)
		require.ErrorContains(t, err, "2 pending interrupts")
		require.ErrorContains(t, err, "ResumeMap")

		// Answer only the left one: the right one pauses again.
		_, err = g.Resume(ctx, "two", statgraph.ResumeMap{ids["left"]: 10})
		require.ErrorAs(t, err, &ie)
		require.Len(t, ie.Interrupts, 1)
		require.Equal(t, "right", ie.Interrupts[0].Node)

		out, err := g.Resume(ctx, "two", statgraph.ResumeMap{ids["right"]: 32})
		require.NoError(t, err)
		require.Equal(t, 42, out.N)
		require.Equal(t, []string{"left", "right"}, out.Log)

		_, err = g.Resume(ctx, "nobody", 1)
		require.ErrorIs(t, err, statgraph.ErrNoCheckpoint)
	})
}

func TestInterruptBeforeAndAfter(t *testing.T) {
	savers(t, func(t *testing.T, cp statgraph.Checkpointer) {
		var calls counter
		fail := false
		g := mustCompile(t, chain(&calls, &fail), statgraph.WithCheckpointer(cp),
			statgraph.WithInterruptBefore("b"), statgraph.WithInterruptAfter("c"))
		ctx := context.Background()
		_, err := g.Invoke(ctx, st{}, statgraph.WithThread("ba"))
		var ie *statgraph.InterruptedError
		require.ErrorAs(t, err, &ie)
		require.Equal(t, "before", ie.Interrupts[0].When)
		require.Equal(t, 0, calls.get("b"))
		require.Equal(t, 1, calls.get("a"))

		// c is the last node: an after-pause with nothing left to run ends.
		out, err := g.Resume(ctx, "ba", nil)
		require.NoError(t, err)
		require.Equal(t, []string{"a", "b", "c"}, out.Log)
		require.Equal(t, 1, calls.get("b"))
	})
}

func TestInterruptAfterPausesBeforeTheNextStep(t *testing.T) {
	var calls counter
	fail := false
	g := mustCompile(t, chain(&calls, &fail), statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer()),
		statgraph.WithInterruptAfter("a"))
	ctx := context.Background()
	_, err := g.Invoke(ctx, st{}, statgraph.WithThread("after"))
	var ie *statgraph.InterruptedError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, "after", ie.Interrupts[0].When)
	require.Equal(t, 0, calls.get("b"))
	snap, err := g.State(ctx, "after")
	require.NoError(t, err)
	require.Equal(t, []string{"b"}, snap.Next)
	out, err := g.Resume(ctx, "after", true)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c"}, out.Log)
	require.Equal(t, 1, calls.get("a"))
}

func TestHistoryReplayAndFork(t *testing.T) {
	savers(t, func(t *testing.T, cp statgraph.Checkpointer) {
		var calls counter
		fail := false
		g := mustCompile(t, chain(&calls, &fail), statgraph.WithCheckpointer(cp))
		ctx := context.Background()
		_, err := g.Invoke(ctx, st{}, statgraph.WithThread("tt"))
		require.NoError(t, err)
		hist, err := g.History(ctx, "tt", 0)
		require.NoError(t, err)
		require.Len(t, hist, 4) // input + 3 steps
		require.Equal(t, statgraph.SourceInput, hist[3].Source)
		require.Equal(t, []string{"a"}, hist[3].Next)
		require.Equal(t, []string{"a"}, hist[2].State.Log)
		require.Equal(t, []string{"b"}, hist[2].Next)
		require.Empty(t, hist[0].Next)
		for i := 1; i < len(hist); i++ {
			require.Equal(t, hist[i].CheckpointID, hist[i-1].Parent)
		}

		// Replay from after a: b and c run again, a does not.
		afterA := hist[2].CheckpointID
		out, err := g.Invoke(ctx, st{}, statgraph.WithThread("tt"), statgraph.FromCheckpoint(afterA))
		require.NoError(t, err)
		require.Equal(t, []string{"a", "b", "c"}, out.Log)
		require.Equal(t, 1, calls.get("a"))
		require.Equal(t, 2, calls.get("b"))
		hist, err = g.History(ctx, "tt", 0)
		require.NoError(t, err)
		var fork *statgraph.Snapshot[st]
		for i := range hist {
			if hist[i].Source == statgraph.SourceFork {
				fork = &hist[i]
			}
		}
		require.NotNil(t, fork)
		require.Equal(t, afterA, fork.Parent)

		// Fork with an edited state, as if a had produced it.
		_, err = g.UpdateState(ctx, "tt", st{N: 100, Log: []string{"edited"}}, "a")
		require.NoError(t, err)
		out, err = g.Invoke(ctx, st{}, statgraph.WithThread("tt"))
		require.NoError(t, err)
		require.Equal(t, []string{"edited", "b", "c"}, out.Log)
		require.Equal(t, 102, out.N)

		_, err = g.UpdateState(ctx, "tt", st{}, "ghost")
		require.ErrorContains(t, err, `no such node`)
		require.NoError(t, cp.DeleteThread(ctx, "tt"))
		_, err = g.State(ctx, "tt")
		require.ErrorIs(t, err, statgraph.ErrNoCheckpoint)
	})
}

func TestStreamReportsCheckpointsAndInterrupts(t *testing.T) {
	var calls counter
	g := mustCompile(t, statgraph.New[st]().AddNode("approve", approver(&calls)).
		AddEdge(statgraph.Start, "approve").AddEdge("approve", statgraph.End),
		statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer()))
	var kinds []statgraph.EventKind
	var last error
	for ev, err := range g.Stream(context.Background(), st{}, statgraph.WithThread("s")) {
		kinds = append(kinds, ev.Kind)
		if ev.Kind == statgraph.EventInterrupt {
			require.JSONEq(t, `{"question":"ship it?","n":0}`, string(ev.Interrupts[0].Payload))
		}
		last = err
	}
	require.Contains(t, kinds, statgraph.EventCheckpoint)
	require.Contains(t, kinds, statgraph.EventInterrupt)
	require.ErrorIs(t, last, statgraph.ErrInterrupted)
	for ev, err := range g.StreamResume(context.Background(), "s", "ok") {
		last = err
		if ev.Kind == statgraph.EventRunEnd {
			require.Equal(t, []string{"answer:ok"}, ev.State.Log)
		}
	}
	require.NoError(t, last)
}
