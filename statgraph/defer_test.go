package statgraph

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
)

// deferGraph is Start -> b and Start -> c1 -> c2 -> c3 -> End, with b -> d
// where d has WithDefer (when deferred is set); every run's log is the
// order in which node bodies ran; c2 fails while failC2 is set.
func deferGraph(t *testing.T, cp Checkpointer, deferred bool, failC2 *bool) (*Graph[handState], func() []string) {
	t.Helper()
	var mu sync.Mutex
	var ran []string
	node := func(name string) func(context.Context, handState) (handState, error) {
		return func(_ context.Context, s handState) (handState, error) {
			mu.Lock()
			ran = append(ran, name)
			mu.Unlock()
			if name == "c2" && failC2 != nil && *failC2 {
				return handState{}, errors.New("c2 failed")
			}
			if name == "d" {
				return handState{Log: []string{"d saw " + string(rune('0'+len(s.Log)))}}, nil
			}
			return handState{Log: []string{name}}, nil
		}
	}
	var opts []NodeOption
	if deferred {
		opts = append(opts, WithDefer())
	}
	b := New[handState]().SetReducer(appendLogs).
		AddNode("b", node("b")).AddNode("c1", node("c1")).AddNode("c2", node("c2")).AddNode("c3", node("c3")).
		AddNode("d", node("d"), opts...).
		AddEdge(Start, "b").AddEdge(Start, "c1").AddEdge("c1", "c2").AddEdge("c2", "c3").AddEdge("c3", End).
		AddEdge("b", "d").AddEdge("d", End)
	var copts []CompileOption
	if cp != nil {
		copts = append(copts, WithCheckpointer(cp))
	}
	g, err := b.Compile(copts...)
	if err != nil {
		t.Fatal(err)
	}
	return g, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(ran)
	}
}

// Mirrors LangGraph's deferred nodes (add_node(..., defer=True), the
// deferred-node cases of test_pregel.py): a node triggered after a branch
// of length 1 waits until the branch of length 3 is done too, runs last,
// once, and sees every update.
func TestDeferRunsWhenNothingElseIsLeft(t *testing.T) {
	g, ran := deferGraph(t, nil, true, nil)
	out, err := g.Invoke(context.Background(), handState{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ran(); len(got) != 5 || got[4] != "d" {
		t.Fatalf("node bodies ran %q; want b, c1, c2, c3 in some order, then d last, once", got)
	}
	if got := out.Log[len(out.Log)-1]; got != "d saw 4" {
		t.Fatalf("d's update %q; want \"d saw 4\" (all four updates merged before d ran)", got)
	}

	// Without WithDefer, d runs in the step after b, beside c2.
	g, ran = deferGraph(t, nil, false, nil)
	if _, err := g.Invoke(context.Background(), handState{}); err != nil {
		t.Fatal(err)
	}
	if got := ran(); got[len(got)-1] == "d" {
		t.Fatalf("without WithDefer d ran last too (%q): the test would not tell the option apart", got)
	}
}

// Mirrors LangGraph's test_checkpoint_recovery with a deferred node: the
// held node is saved with the checkpoints, so a run that failed in c2
// and is resumed still runs d at the end, once.
func TestDeferSurvivesResume(t *testing.T) {
	cp := &memoryCheckpointer{encode: true}
	fail := true
	g, ran := deferGraph(t, cp, true, &fail)
	ctx := context.Background()
	if _, err := g.Invoke(ctx, handState{}, WithThread("d")); err == nil {
		t.Fatal("first run: want c2's failure")
	}
	fail = false
	g2, ran2 := deferGraph(t, cp, true, &fail)
	out, err := g2.Invoke(ctx, handState{}, WithThread("d"))
	if err != nil {
		t.Fatal(err)
	}
	if got := ran2(); !slices.Equal(got, []string{"c2", "c3", "d"}) {
		t.Fatalf("resumed run ran %q (first run %q); want c2, c3, d", got, ran())
	}
	if got := out.Log[len(out.Log)-1]; got != "d saw 4" {
		t.Fatalf("d's update %q; want \"d saw 4\"", got)
	}
}
