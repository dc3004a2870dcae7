package statgraph_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// TestAddCheck: a check added to the builder runs at Compile with the
// graph's reachability over every kind of edge, and its error is reported
// with the other compile problems.
func TestAddCheck(t *testing.T) {
	id := func(_ context.Context, s int) (int, error) { return s, nil }
	b := statgraph.New[int]().AddNode("a", id).AddNode("b", id).AddNode("c", id).
		AddEdge(statgraph.Start, "a").AddEdge("a", "b").
		AddConditionalEdges("b", func(context.Context, int) string { return "x" }, map[string]string{"x": "a", "y": "c"}).
		AddEdge("c", statgraph.End)
	got := map[string]bool{}
	b.AddCheck(func(reaches func(from, to string) bool) error {
		for _, p := range [][2]string{
			{statgraph.Start, "a"}, {"a", "c"}, {"b", "a"}, {"a", "a"}, {"c", "a"}, {"c", "c"},
			{"a", statgraph.End}, {"c", statgraph.End}, {"nowhere", "a"}, {"a", "nowhere"},
		} {
			got[p[0]+">"+p[1]] = reaches(p[0], p[1])
		}
		return nil
	})
	_, err := b.Compile()
	require.NoError(t, err)
	require.Equal(t, map[string]bool{
		"__start__>a": true, "a>c": true, "b>a": true, "a>a": true, "c>a": false, "c>c": false,
		"a>__end__": true, "c>__end__": true, "nowhere>a": false, "a>nowhere": false,
	}, got)

	b.AddCheck(func(func(from, to string) bool) error { return errors.New("layer: what is wrong") }).AddCheck(nil)
	_, err = b.Compile()
	joined, ok := err.(interface{ Unwrap() []error })
	require.True(t, ok, "Compile's error lists its problems: %v", err)
	var problems []string
	for _, e := range joined.Unwrap() {
		problems = append(problems, e.Error())
	}
	require.ElementsMatch(t, []string{"layer: what is wrong", "AddCheck: nil check"}, problems)
}

// TestAddCheckReachesRandom compares reaches with a plain walk on random
// graphs with cycles, self-loops, conditional edges and nodes Start cannot
// reach, for every pair of names (Start, End and an unknown name included).
func TestAddCheckReachesRandom(t *testing.T) {
	id := func(_ context.Context, s int) (int, error) { return s, nil }
	rng := rand.New(rand.NewPCG(1, 13))
	for round := range 200 {
		n := 1 + rng.IntN(12)
		names := make([]string, n)
		for i := range n {
			names[i] = fmt.Sprintf("n%02d", rng.IntN(100)*100+i) // names sort in no particular order
		}
		b := statgraph.New[int]()
		succ := map[string][]string{}
		edge := func(from, to string) { succ[from] = append(succ[from], to) }
		for _, name := range names {
			b.AddNode(name, id)
		}
		for range 1 + rng.IntN(2) {
			to := names[rng.IntN(n)]
			b.AddEdge(statgraph.Start, to)
			edge(statgraph.Start, to)
		}
		for _, from := range names {
			switch rng.IntN(4) {
			case 0: // no edge out
			case 1:
				paths := map[string]string{}
				for k := range 1 + rng.IntN(3) {
					to := names[rng.IntN(n)]
					if rng.IntN(4) == 0 {
						to = statgraph.End
					}
					paths[fmt.Sprint(k)] = to
					edge(from, to)
				}
				b.AddConditionalEdges(from, func(context.Context, int) string { return "0" }, paths)
			default:
				for range 1 + rng.IntN(2) {
					to := names[rng.IntN(n)]
					if rng.IntN(5) == 0 {
						to = statgraph.End
					}
					b.AddEdge(from, to)
					edge(from, to)
				}
			}
		}
		walk := func(from, to string) bool { // one or more edges
			seen := map[string]bool{}
			stack := slices.Clone(succ[from])
			for len(stack) > 0 {
				x := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if x == to {
					return true
				}
				if !seen[x] {
					seen[x] = true
					stack = append(stack, succ[x]...)
				}
			}
			return false
		}
		all := append(slices.Clone(names), statgraph.Start, statgraph.End, "nowhere")
		b.AddCheck(func(reaches func(from, to string) bool) error {
			for _, from := range all {
				for _, to := range all {
					want := walk(from, to) && from != statgraph.End && from != "nowhere"
					if got := reaches(from, to); got != want {
						t.Errorf("round %d: reaches(%s, %s) = %v, want %v; edges %v", round, from, to, got, want, succ)
					}
				}
			}
			return nil
		})
		b.Compile() // the graph may have other problems; the check runs anyway
	}
}
