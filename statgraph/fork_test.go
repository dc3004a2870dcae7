package statgraph

import (
	"context"
	"errors"
	"slices"
	"testing"
)

type forkState struct {
	Log   []string
	Value int
}

// Mirrors LangGraph's time-travel fork (test_time_travel.py: update_state
// with the config of a past checkpoint, then invoke(None, fork_config)):
// editing the state of checkpoint k and continuing re-runs only the nodes
// that follow k, on the edited state, and leaves the original history as
// it was.
func TestForkFromPastCheckpointWithEditedState(t *testing.T) {
	ctx := context.Background()
	runs := map[string]int{}
	step := func(name string) func(context.Context, forkState) (forkState, error) {
		return func(_ context.Context, s forkState) (forkState, error) {
			runs[name]++
			s.Log = append(slices.Clip(s.Log), name)
			s.Value++
			return s, nil
		}
	}
	g, err := New[forkState]().
		AddNode("a", step("a")).AddNode("b", step("b")).AddNode("c", step("c")).
		AddEdge(Start, "a").AddEdge("a", "b").AddEdge("b", "c").AddEdge("c", End).
		Compile(WithCheckpointer(&memoryCheckpointer{encode: true}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Invoke(ctx, forkState{}, WithThread("t")); err != nil {
		t.Fatal(err)
	}
	hist, err := g.History(ctx, "t", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var k Snapshot[forkState] // the checkpoint after a, before b
	for _, s := range hist {
		if slices.Equal(s.Next, []string{"b"}) {
			k = s
		}
	}
	if k.CheckpointID == 0 {
		t.Fatalf("no checkpoint before b in %d snapshots", len(hist))
	}
	edited := k.State
	edited.Value = 100
	id, err := g.UpdateState(ctx, "t", edited, "", FromCheckpoint(k.CheckpointID))
	if err != nil {
		t.Fatal(err)
	}
	fork, err := g.State(ctx, "t")
	if err != nil || fork.CheckpointID != id || fork.Parent != k.CheckpointID || !slices.Equal(fork.Next, []string{"b"}) {
		t.Fatalf("fork checkpoint = %+v (err %v); want id %d with parent %d and next [b]", fork, err, id, k.CheckpointID)
	}
	s, err := g.Invoke(ctx, forkState{}, WithThread("t"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Value != 102 || !slices.Equal(s.Log, []string{"a", "b", "c"}) {
		t.Fatalf("forked run ended with %+v, want value 102 (100 + b + c) and log [a b c]", s)
	}
	if runs["a"] != 1 || runs["b"] != 2 || runs["c"] != 2 {
		t.Fatalf("runs = %v, want a once, b and c twice", runs)
	}
	// The original branch is still in the history.
	old, err := g.History(ctx, "t", 0, 0)
	if err != nil || len(old) != len(hist)+3 {
		t.Fatalf("history after the fork has %d snapshots (err %v), want %d", len(old), err, len(hist)+3)
	}

	_, err = g.UpdateState(ctx, "t", edited, "", FromCheckpoint(999))
	if !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("fork from a missing checkpoint: %v, want ErrNoCheckpoint", err)
	}
}
