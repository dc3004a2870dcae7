package checkpointtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// The tests in this file run compiled graphs on the store: they check what
// the engine needs of it, not how it stores rows.

// st is the state of the test graphs.
type st struct {
	N   int
	Log []string
}

func step(name string) func(context.Context, st) (st, error) {
	return func(_ context.Context, s st) (st, error) {
		s.N++
		s.Log = append(s.Log, name)
		return s, nil
	}
}

// appendReducer merges parallel updates: N adds up, Log appends.
func appendReducer(cur, upd st) st {
	cur.N += upd.N
	cur.Log = statgraph.Append(cur.Log, upd.Log)
	return cur
}

// counter counts node executions by name; safe for parallel nodes.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) inc(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[name]++
}

func (c *counter) get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

func compile(t *testing.T, b *statgraph.Builder[st], opts ...statgraph.CompileOption) *statgraph.Graph[st] {
	t.Helper()
	g, err := b.Compile(opts...)
	require.NoError(t, err)
	return g
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

func approver(calls *counter) func(context.Context, st) (st, error) {
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

func testResumeAfterFailure(t *testing.T, cp statgraph.Checkpointer) {
	var calls counter
	fail := true
	g := compile(t, chain(&calls, &fail), statgraph.WithCheckpointer(cp))
	ctx := t.Context()
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
}

func testPendingWrites(t *testing.T, cp statgraph.Checkpointer) {
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
	g := compile(t, b, statgraph.WithCheckpointer(cp))
	ctx := t.Context()
	_, err := g.Invoke(ctx, st{}, statgraph.WithThread("par"))
	require.ErrorContains(t, err, "p2 flaked")
	latest, err := cp.Get(ctx, "par", 0)
	require.NoError(t, err)
	var pending []string
	for _, p := range latest.Pending {
		pending = append(pending, p.Node)
	}
	slices.Sort(pending)
	require.Equal(t, []string{"p1", "p3"}, pending, "the failed step's finished nodes are stored as pending writes")

	fail = false
	out, err := g.Invoke(ctx, st{}, statgraph.WithThread("par"))
	require.NoError(t, err)
	require.Equal(t, []string{"p1", "p2", "p3", "join"}, out.Log)
	require.Equal(t, 3, out.N)
	require.Equal(t, 1, calls.get("p1"))
	require.Equal(t, 2, calls.get("p2"))
	require.Equal(t, 1, calls.get("p3"))
	require.Equal(t, 1, calls.get("join"))
}

func testInterruptInsideNode(t *testing.T, cp statgraph.Checkpointer) {
	var calls counter
	g := compile(t, statgraph.New[st]().AddNode("prep", step("prep")).AddNode("approve", approver(&calls)).
		AddNode("ship", step("ship")).
		AddEdge(statgraph.Start, "prep").AddEdge("prep", "approve").AddEdge("approve", "ship").AddEdge("ship", statgraph.End),
		statgraph.WithCheckpointer(cp))
	ctx := t.Context()
	var ie statgraph.Result[st]
	_, err := g.Invoke(ctx, st{}, statgraph.WithThread("h"), statgraph.WithResult(&ie))
	require.ErrorIs(t, err, statgraph.ErrInterrupted)
	require.ErrorIs(t, err, statgraph.ErrInterrupted)
	require.Len(t, ie.Interrupts, 1)
	require.Equal(t, "approve", ie.Interrupts[0].Node)
	require.JSONEq(t, `{"question":"ship it?","n":1}`, string(ie.Interrupts[0].Payload))

	// Invoking again does not skip the question.
	_, err = g.Invoke(ctx, st{}, statgraph.WithThread("h"))
	require.ErrorIs(t, err, statgraph.ErrInterrupted)
	require.ErrorContains(t, err, "continue it with WithResume(value)")

	out, err := g.Invoke(ctx, st{}, statgraph.WithThread("h"), statgraph.WithResume("yes"))
	require.NoError(t, err)
	require.Equal(t, []string{"prep", "answer:yes", "ship"}, out.Log)
	require.Equal(t, 2, calls.get("approve"), "the node re-runs from its start on resume")

	_, err = g.Invoke(ctx, st{}, statgraph.WithThread("h"), statgraph.WithResume("again"))
	require.ErrorContains(t, err, "statgraph: thread is not interrupted")
}

func testTwoInterrupts(t *testing.T, cp statgraph.Checkpointer) {
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
	g := compile(t, b, statgraph.WithCheckpointer(cp))
	ctx := t.Context()
	var ie statgraph.Result[st]
	_, err := g.Invoke(ctx, st{}, statgraph.WithThread("two"), statgraph.WithResult(&ie))
	require.ErrorIs(t, err, statgraph.ErrInterrupted)
	require.Len(t, ie.Interrupts, 2)
	ids := map[string]string{}
	for _, in := range ie.Interrupts {
		ids[in.Node] = in.ID
	}

	_, err = g.Invoke(ctx, st{}, statgraph.WithThread("two"), statgraph.WithResume(5))
	require.ErrorContains(t, err, "2 pending interrupts")
	require.ErrorContains(t, err, "ResumeMap")

	// Answer only the left one: the right one pauses again.
	_, err = g.Invoke(ctx, st{}, statgraph.WithThread("two"), statgraph.WithResume(statgraph.ResumeMap{ids["left"]: 10}), statgraph.WithResult(&ie))
	require.ErrorIs(t, err, statgraph.ErrInterrupted)
	require.Len(t, ie.Interrupts, 1)
	require.Equal(t, "right", ie.Interrupts[0].Node)

	out, err := g.Invoke(ctx, st{}, statgraph.WithThread("two"), statgraph.WithResume(statgraph.ResumeMap{ids["right"]: 32}))
	require.NoError(t, err)
	require.Equal(t, 42, out.N)
	require.Equal(t, []string{"left", "right"}, out.Log)

	_, err = g.Invoke(ctx, st{}, statgraph.WithThread("nobody"), statgraph.WithResume(1))
	require.ErrorIs(t, err, statgraph.ErrNoCheckpoint)
}

func testInterruptBeforeAndAfter(t *testing.T, cp statgraph.Checkpointer) {
	var calls counter
	fail := false
	g := compile(t, chain(&calls, &fail), statgraph.WithCheckpointer(cp),
		statgraph.WithInterruptBefore("b"), statgraph.WithInterruptAfter("c"))
	ctx := t.Context()
	var ie statgraph.Result[st]
	_, err := g.Invoke(ctx, st{}, statgraph.WithThread("ba"), statgraph.WithResult(&ie))
	require.ErrorIs(t, err, statgraph.ErrInterrupted)
	require.Equal(t, "before", ie.Interrupts[0].When)
	require.Equal(t, 0, calls.get("b"))
	require.Equal(t, 1, calls.get("a"))

	// c is the last node: an after-pause with nothing left to run ends.
	out, err := g.Invoke(ctx, st{}, statgraph.WithThread("ba"), statgraph.WithResume(nil))
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c"}, out.Log)
	require.Equal(t, 1, calls.get("b"))
}

func testInterruptAfterPauses(t *testing.T, cp statgraph.Checkpointer) {
	var calls counter
	fail := false
	g := compile(t, chain(&calls, &fail), statgraph.WithCheckpointer(cp), statgraph.WithInterruptAfter("a"))
	ctx := t.Context()
	var ie statgraph.Result[st]
	_, err := g.Invoke(ctx, st{}, statgraph.WithThread("after"), statgraph.WithResult(&ie))
	require.ErrorIs(t, err, statgraph.ErrInterrupted)
	require.Equal(t, "after", ie.Interrupts[0].When)
	require.Equal(t, 0, calls.get("b"))
	snap, err := g.State(ctx, "after")
	require.NoError(t, err)
	require.Equal(t, []string{"b"}, snap.Next)
	out, err := g.Invoke(ctx, st{}, statgraph.WithThread("after"), statgraph.WithResume(true))
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c"}, out.Log)
	require.Equal(t, 1, calls.get("a"))
}

func testHistoryReplayAndFork(t *testing.T, cp statgraph.Checkpointer) {
	var calls counter
	fail := false
	g := compile(t, chain(&calls, &fail), statgraph.WithCheckpointer(cp))
	ctx := t.Context()
	_, err := g.Invoke(ctx, st{}, statgraph.WithThread("tt"))
	require.NoError(t, err)
	hist, err := g.History(ctx, "tt", 0, 0)
	require.NoError(t, err)
	require.Len(t, hist, 4) // input + 3 steps
	require.Equal(t, "input", hist[3].Source)
	require.Equal(t, []string{"a"}, hist[3].Next)
	require.Equal(t, []string{"a"}, hist[2].State.Log)
	require.Equal(t, []string{"b"}, hist[2].Next)
	require.Empty(t, hist[0].Next)
	for i := 1; i < len(hist); i++ {
		require.Equal(t, hist[i].CheckpointID, hist[i-1].Parent)
	}
	limited, err := g.History(ctx, "tt", 0, 2)
	require.NoError(t, err)
	require.Len(t, limited, 2)
	require.Equal(t, hist[1].State, limited[1].State)

	// Replay from after a: b and c run again, a does not.
	afterA := hist[2].CheckpointID
	out, err := g.Invoke(ctx, st{}, statgraph.WithThread("tt"), statgraph.FromCheckpoint(afterA))
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c"}, out.Log)
	require.Equal(t, 1, calls.get("a"))
	require.Equal(t, 2, calls.get("b"))
	hist, err = g.History(ctx, "tt", 0, 0)
	require.NoError(t, err)
	var fork *statgraph.Snapshot[st]
	for i := range hist {
		if hist[i].Source == "fork" {
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
	_, err = cp.Delete(ctx, "tt", 0)
	require.NoError(t, err)
	_, err = g.State(ctx, "tt")
	require.ErrorIs(t, err, statgraph.ErrNoCheckpoint)
}

// testDeltaRows runs a 40-step loop whose state grows each step, so that a
// store given encoded states receives delta rows, and reads every
// checkpoint back through History: each state must be the one its step
// produced, which needs every delta row stored and returned intact.
func testDeltaRows(t *testing.T, cp statgraph.Checkpointer) {
	const steps = 40
	g := compile(t, statgraph.New[st]().
		AddNode("grow", func(_ context.Context, s st) (st, error) {
			s.N++
			s.Log = append(s.Log, fmt.Sprintf("line %d of a log that grows by one line per step", s.N))
			return s, nil
		}).
		AddEdge(statgraph.Start, "grow").
		AddConditionalEdges("grow", func(_ context.Context, s st) string {
			if s.N < steps {
				return "more"
			}
			return "done"
		}, map[string]string{"more": "grow", "done": statgraph.End}),
		statgraph.WithCheckpointer(cp))
	ctx := t.Context()
	out, err := g.Invoke(ctx, st{}, statgraph.WithThread("delta"))
	require.NoError(t, err)
	require.Equal(t, steps, out.N)
	hist, err := g.History(ctx, "delta", 0, 0)
	require.NoError(t, err)
	require.Len(t, hist, steps+1)
	for i, snap := range hist {
		n := steps - i
		require.Equal(t, n, snap.State.N, "checkpoint %d", snap.CheckpointID)
		require.Len(t, snap.State.Log, n, "checkpoint %d", snap.CheckpointID)
	}
	rows, err := cp.Range(ctx, "delta", 0, 0, 0)
	require.NoError(t, err)
	var deltas int
	for _, row := range rows {
		if row.Delta {
			deltas++
			assert.NotEmpty(t, row.State, "delta row %d", row.ID)
		}
	}
	if rows[0].Value == nil { // a store of encoded states
		assert.Greater(t, deltas, steps/2, "most checkpoints of a growing state are deltas")
	}
	// A checkpoint in the middle loads on its own, through its chain of
	// deltas.
	mid, err := g.Invoke(ctx, st{}, statgraph.WithThread("delta"), statgraph.FromCheckpoint(hist[steps/2].CheckpointID))
	require.NoError(t, err)
	require.Equal(t, steps, mid.N)
	require.Len(t, mid.Log, steps)
}

// testConcurrentThreads runs one graph on 16 threads at once, each failing
// once half way and resumed: no thread sees another's state.
func testConcurrentThreads(t *testing.T, cp statgraph.Checkpointer) {
	var mu sync.Mutex
	failed := map[string]bool{}
	b := statgraph.New[st]()
	for _, name := range []string{"a", "b", "c"} {
		b.AddNode(name, func(_ context.Context, s st) (st, error) {
			if name == "b" {
				mu.Lock()
				first := !failed[s.Log[0]]
				failed[s.Log[0]] = true
				mu.Unlock()
				if first {
					return s, fmt.Errorf("%s fails once", s.Log[0])
				}
			}
			s.N++
			s.Log = append(s.Log, name)
			return s, nil
		})
	}
	g := compile(t, b.AddEdge(statgraph.Start, "a").AddEdge("a", "b").AddEdge("b", "c").AddEdge("c", statgraph.End),
		statgraph.WithCheckpointer(cp))
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		thread := fmt.Sprint("run-", i)
		wg.Go(func() {
			input := st{N: i * 100, Log: []string{thread}}
			if _, err := g.Invoke(ctx, input, statgraph.WithThread(thread)); err == nil {
				errs <- fmt.Errorf("%s: the first run did not fail", thread)
				return
			}
			out, err := g.Invoke(ctx, st{}, statgraph.WithThread(thread))
			if err != nil {
				errs <- err
				return
			}
			if want := (st{N: i*100 + 3, Log: []string{thread, "a", "b", "c"}}); !slices.Equal(out.Log, want.Log) || out.N != want.N {
				errs <- fmt.Errorf("%s ended with %+v, want %+v", thread, out, want)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
