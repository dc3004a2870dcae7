package statgraph

import (
	"context"
	"fmt"
	"testing"
)

// TestChecksWorkIsLinear bounds the work of answering AddCheck's queries
// by counting the nodes visited, not time: a chain of n nodes with a gate's
// retry edge back from every odd node and, for every pair of neighbours,
// the queries a gate's check and the audit's per-pair check make, plus one
// from the first node to every other. Answering them walked the graph once
// per distinct source (n²/2 nodes for this graph); the components pass
// visits each node once and none of these queries needs a search.
func TestChecksWorkIsLinear(t *testing.T) {
	const n = 20_000
	noop := func(_ context.Context, s int) (int, error) { return s, nil }
	name := func(i int) string { return fmt.Sprintf("n%06d", i) }
	b := New[int]()
	for i := range n {
		b.AddNode(name(i), noop)
	}
	b.AddEdge(Start, name(0)).AddEdge(name(n-1), End)
	queries, want := 0, 0
	for i := 1; i < n; i++ {
		from, to := name(i-1), name(i)
		b.AddEdge(from, to)
		answers := map[[2]string]bool{{Start, from}: true, {from, to}: true, {to, from}: i%2 == 1, {name(0), to}: true, {to, End}: true}
		want += 2 * len(answers) // Compile runs the check once, the test once more
		if i%2 == 1 {
			b.AddEdge(to, from) // a gate's retry edge
		}
		b.AddCheck(func(reaches func(from, to string) bool) error {
			for q, w := range answers {
				queries++
				if got := reaches(q[0], q[1]); got != w {
					return fmt.Errorf("reaches(%s, %s) = %v, want %v", q[0], q[1], got, w)
				}
			}
			return nil
		})
	}
	g, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	fromStart, toEnd := g.reachable()
	r := newReachIndex(g, fromStart, toEnd)
	for _, c := range b.checks {
		if err := c(r.reaches); err != nil {
			t.Fatal(err)
		}
	}
	if queries != want {
		t.Fatalf("%d queries, want %d", queries, want)
	}
	if r.visited > 2*n {
		t.Fatalf("answering %d queries on %d nodes visited %d nodes, want at most %d (linear)", queries/2, n, r.visited, 2*n)
	}
}
