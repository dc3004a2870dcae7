package statgraph_test

import (
	"context"
	"errors"
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
