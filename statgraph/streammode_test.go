package statgraph

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

type tally struct {
	Items []string
	N     int
}

func mergeTally(cur, up tally) tally {
	cur.Items = append(slices.Clip(cur.Items), up.Items...)
	cur.N += up.N
	return cur
}

// streamFixture: a fans out to b and c (parallel), then d; b and d write
// progress values with RuntimeOf(ctx).Write.
func streamFixture(t *testing.T) *Graph[tally] {
	t.Helper()
	progress := func(name string, n int) func(context.Context, tally) (tally, error) {
		return func(ctx context.Context, _ tally) (tally, error) {
			w := RuntimeOf(ctx).Write
			for i := 1; i <= n; i++ {
				w(fmt.Sprintf("%s %d/%d", name, i, n))
			}
			return tally{Items: []string{name}, N: 1}, nil
		}
	}
	g, err := New[tally]().SetReducer(mergeTally).
		AddNode("a", progress("a", 0)).AddNode("b", progress("b", 2)).
		AddNode("c", progress("c", 0)).AddNode("d", progress("d", 1)).
		AddEdge(Start, "a").AddEdge("a", "b").AddEdge("a", "c").AddEdge("b", "d").AddEdge("c", "d").AddEdge("d", End).
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func render(ev Event[tally]) string {
	switch ev.Kind {
	case EventNodeUpdate:
		if ev.Namespace != "" {
			return fmt.Sprintf("update %s %v", ev.Node, ev.Custom.(tally).Items)
		}
		return fmt.Sprintf("update %s %v", ev.Node, ev.State.Items)
	case EventCustom:
		return fmt.Sprintf("custom %s %v", ev.Node, ev.Custom.(string))
	case EventUpdate:
		return fmt.Sprintf("values %v", ev.State.Items)
	case EventRunEnd:
		return fmt.Sprintf("end %v %v", ev.State.Items, ev.Err)
	}
	return string(ev.Kind) + " " + ev.Node
}

func collect(t *testing.T, g *Graph[tally], opts ...RunOption) []string {
	t.Helper()
	var got []string
	for ev, err := range g.Stream(context.Background(), tally{}, opts...) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, render(ev))
	}
	return got
}

// Mirrors LangGraph's stream_mode="updates" and "custom" assertions
// (test_pregel.py: test_in_one_fan_out_state_graph_waiting_edge for
// updates, get_stream_writer in the custom-stream tests): each node's own
// update, in node order within a step, and the values a node writes, in
// the order written, before the node's update; nothing else but the end.
func TestStreamModesUpdatesAndCustom(t *testing.T) {
	g := streamFixture(t)
	got := collect(t, g, WithEvents(EventNodeUpdate, EventCustom))
	want := []string{
		"update a [a]",
		"custom b b 1/2", "custom b b 2/2", "update b [b]", "update c [c]",
		"custom d d 1/1", "update d [d]",
		"end [a b c d] <nil>",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("updates+custom stream:\n got %q\nwant %q", got, want)
	}
	// values: the state after each step.
	got = collect(t, g, WithEvents(EventUpdate))
	want = []string{"values [a]", "values [a b c]", "values [a b c d]", "end [a b c d] <nil>"}
	if !slices.Equal(got, want) {
		t.Fatalf("values stream:\n got %q\nwant %q", got, want)
	}
}

// The default stream (debug: the whole lifecycle) has no node updates or
// custom values: they are opt-in, so a run that does not ask for them pays
// nothing.
func TestStreamModesOptIn(t *testing.T) {
	g := streamFixture(t)
	got := collect(t, g)
	for _, line := range got {
		if line[:6] == "update" || line[:6] == "custom" {
			t.Fatalf("default stream yielded %q; node updates and custom values are opt-in", line)
		}
	}
	if len(got) != 16 || got[0] != "run_start " || got[1] != "step_start " || got[2] != "node_start a" {
		t.Fatalf("default stream = %q", got)
	}
}

// A subgraph's custom values and node updates reach the parent's stream
// with the subgraph's namespace, each update with its content (the child's
// state, in Custom), as LangGraph's stream(..., subgraphs=True) yields
// (namespace, update) pairs (test_stream_subgraphs_during_execution).
func TestStreamModesFromSubgraph(t *testing.T) {
	child := streamFixture(t)
	b := New[tally]().AddEdge(Start, "inner").AddEdge("inner", End)
	AddSubgraph(b, "inner", child, func(tally) tally { return tally{} }, func(_ tally, c tally) tally { return c })
	g, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for ev, err := range g.Stream(context.Background(), tally{}, WithEvents(EventCustom, EventNodeUpdate)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Namespace+":"+render(ev))
	}
	want := []string{
		"inner:update a [a]", "inner:custom b b 1/2", "inner:custom b b 2/2", "inner:update b [b]", "inner:update c [c]",
		"inner:custom d d 1/1", "inner:update d [d]", ":update inner [a b c d]", ":end [a b c d] <nil>",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("stream of a graph with a subgraph:\n got %q\nwant %q", got, want)
	}
}
