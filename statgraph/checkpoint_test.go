package statgraph_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/checkpointtest"
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

// TestMemoryConformance runs the checkpointer conformance suite against the
// value-keeping and the encoding memory checkpointer.
func TestMemoryConformance(t *testing.T) {
	t.Run("values", func(t *testing.T) {
		checkpointtest.Run(t, func(*testing.T) statgraph.Checkpointer { return statgraph.NewMemoryCheckpointer(false) })
	})
	t.Run("encoded", func(t *testing.T) {
		checkpointtest.Run(t, func(*testing.T) statgraph.Checkpointer { return statgraph.NewMemoryCheckpointer(true) })
	})
}

func TestThreadOptionsNeedACheckpointer(t *testing.T) {
	g := mustCompile(t, oneNode(step("n")))
	_, err := g.Invoke(context.Background(), st{}, statgraph.WithThread("x"))
	require.ErrorIs(t, err, statgraph.ErrNoCheckpointer)
	_, err = g.Invoke(context.Background(), st{}, statgraph.WithThread("x"), statgraph.WithResume(1))
	require.ErrorIs(t, err, statgraph.ErrNoCheckpointer)
	_, err = g.History(context.Background(), "x", 0, 0)
	require.ErrorIs(t, err, statgraph.ErrNoCheckpointer)

	g2 := mustCompile(t, oneNode(step("n")), statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(false)))
	_, err = g2.Invoke(context.Background(), st{})
	require.ErrorContains(t, err, "pass WithThread(id)")
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

func TestInterruptWithoutCheckpointerIsAClearError(t *testing.T) {
	var calls counter
	g := mustCompile(t, oneNode(approver(&calls)))
	_, err := g.Invoke(context.Background(), st{})
	require.ErrorIs(t, err, statgraph.ErrNoCheckpointer)
	require.ErrorContains(t, err, `node "n" called Interrupt`)
}

func TestStreamReportsCheckpointsAndInterrupts(t *testing.T) {
	var calls counter
	g := mustCompile(t, statgraph.New[st]().AddNode("approve", approver(&calls)).
		AddEdge(statgraph.Start, "approve").AddEdge("approve", statgraph.End),
		statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(false)))
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
	for ev, err := range g.Stream(context.Background(), st{}, statgraph.WithThread("s"), statgraph.WithResume("ok")) {
		last = err
		if ev.Kind == statgraph.EventRunEnd {
			require.Equal(t, []string{"answer:ok"}, ev.State.Log)
		}
	}
	require.NoError(t, last)
}
