package statgraph

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// crashStore is a durable-looking store whose contents can be copied at any
// moment, the copy being what a kill -9 at that moment would leave; Put of
// the checkpoint of step holdStep waits for release (to pin down a write in
// flight).
type crashStore struct {
	memoryCheckpointer
	holdStep int
	release  chan struct{}
}

func (c *crashStore) Put(ctx context.Context, cp *Checkpoint) error {
	if c.release != nil && cp.Source == sourceLoop && cp.Step == c.holdStep {
		select {
		case <-c.release:
		case <-time.After(5 * time.Second):
			return errors.New("the held write was never released: the run waited for it instead of running on")
		}
	}
	return c.memoryCheckpointer.Put(ctx, cp)
}

// image returns a new store holding what c holds now.
func (c *crashStore) image(t *testing.T, thread string) *memoryCheckpointer {
	list, err := c.memoryCheckpointer.Range(context.Background(), thread, 0, 0, 0)
	if err != nil {
		t.Error(err)
	}
	m := &memoryCheckpointer{encode: true}
	for i := len(list) - 1; i >= 0; i-- {
		if err := m.Put(context.Background(), list[i]); err != nil {
			t.Error(err)
		}
	}
	return m
}

type durState struct{ Log []string }

// durGraph is a -> b -> c -> d; crashAt, when set, is called as c starts.
func durGraph(t *testing.T, cp Checkpointer, runs map[string]int, crashAt func()) *Graph[durState] {
	t.Helper()
	var mu sync.Mutex
	step := func(name string) func(context.Context, durState) (durState, error) {
		return func(_ context.Context, s durState) (durState, error) {
			mu.Lock()
			runs[name]++
			mu.Unlock()
			if name == "c" && crashAt != nil {
				crashAt()
			}
			s.Log = append(slices.Clip(s.Log), name)
			return s, nil
		}
	}
	g, err := New[durState]().
		AddNode("a", step("a")).AddNode("b", step("b")).AddNode("c", step("c")).AddNode("d", step("d")).
		AddEdge(Start, "a").AddEdge("a", "b").AddEdge("b", "c").AddEdge("c", "d").AddEdge("d", End).
		Compile(WithCheckpointer(cp))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Mirrors LangGraph's durability parametrisation of test_pregel.py
// (durability="sync" | "async" | "exit", e.g. in
// test_nested_graph_interrupts_parallel): what a crash while node c runs
// leaves behind, and what a restarted process then runs again.
//   - sync: the checkpoint after b is durable before c starts: c and d run again;
//   - async: the write after b may still be in flight: b, c and d run again;
//   - exit: nothing was written (not even the input): everything runs
//     again, and a run that ends writes only its end.
func TestDurabilityModesCrashBehaviour(t *testing.T) {
	for _, tc := range []struct {
		mode      Durability
		rerun     []string // nodes the restarted process runs
		afterRun  int      // checkpoints the undisturbed run leaves
		holdWrite bool
	}{
		{DurabilitySync, []string{"c", "d"}, 5, false},
		{DurabilityAsync, []string{"b", "c", "d"}, 5, true},
		{DurabilityExit, []string{"a", "b", "c", "d"}, 1, false},
	} {
		t.Run([]string{"sync", "async", "exit"}[tc.mode], func(t *testing.T) {
			store := &crashStore{memoryCheckpointer: memoryCheckpointer{encode: true}}
			if tc.holdWrite {
				store.holdStep, store.release = 2, make(chan struct{})
			}
			var image *memoryCheckpointer
			runs := map[string]int{}
			g := durGraph(t, store, runs, func() {
				image = store.image(t, "t") // kill -9 now
				if store.release != nil {
					close(store.release)
				}
			})
			s, err := g.Invoke(context.Background(), durState{}, WithThread("t"), WithDurability(tc.mode))
			if err != nil || !slices.Equal(s.Log, []string{"a", "b", "c", "d"}) {
				t.Fatalf("run: %+v, %v", s, err)
			}
			if all, _ := store.Range(context.Background(), "t", 0, 0, 0); len(all) != tc.afterRun {
				t.Fatalf("the run left %d checkpoints, want %d", len(all), tc.afterRun)
			}
			// The restarted process continues the thread from what survived.
			reruns := map[string]int{}
			g2 := durGraph(t, image, reruns, nil)
			s, err = g2.Invoke(context.Background(), durState{}, WithThread("t"))
			if err != nil || !slices.Equal(s.Log, []string{"a", "b", "c", "d"}) {
				t.Fatalf("restarted run: %+v, %v", s, err)
			}
			var ran []string
			for _, n := range []string{"a", "b", "c", "d"} {
				if reruns[n] > 0 {
					ran = append(ran, n)
				}
			}
			if !slices.Equal(ran, tc.rerun) {
				t.Fatalf("after a crash in c the restart ran %v, want %v", ran, tc.rerun)
			}
		})
	}
}

// Under DurabilityExit a run stopped between steps saves where it stopped,
// so it can be continued; a run that pauses at an interrupt saves too.
func TestDurabilityExitSavesWhenStopped(t *testing.T) {
	store := &memoryCheckpointer{encode: true}
	runs := map[string]int{}
	g := durGraph(t, store, runs, nil)
	_, err := g.Invoke(context.Background(), durState{}, WithThread("t"), WithDurability(DurabilityExit), WithStepLimit(2))
	if !errors.Is(err, ErrStepLimit) {
		t.Fatalf("run: %v, want ErrStepLimit", err)
	}
	snap, err := g.State(context.Background(), "t")
	if err != nil || !slices.Equal(snap.Next, []string{"c"}) || !slices.Equal(snap.State.Log, []string{"a", "b"}) {
		t.Fatalf("saved at exit: %+v, %v; want state [a b] with c next", snap, err)
	}
	if snap.Counters["a"] != 1 || snap.Counters["b"] != 1 {
		t.Fatalf("counters at exit = %v, want a and b once", snap.Counters)
	}
	s, err := g.Invoke(context.Background(), durState{}, WithThread("t"))
	if err != nil || !slices.Equal(s.Log, []string{"a", "b", "c", "d"}) || runs["a"] != 1 {
		t.Fatalf("continued: %+v, %v, runs %v", s, err, runs)
	}
}
