package statgraph_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// The regression tests of what the differential test found, each with the
// seed that showed it.

// TestFirstStepMergesInNodeNameOrder checks that the first step's updates
// merge in node-name order, as every later step's do, when Start has both
// a plain edge and a router (seed 42: Start -> n2 and a router from Start
// choosing n1; the engine merged n2's update before n1's, and its
// EventStepStart listed [n2 n1]).
func TestFirstStepMergesInNodeNameOrder(t *testing.T) {
	type log struct{ Names []string }
	b := statgraph.New[log]().SetReducer(func(cur, u log) log { return log{statgraph.Append(cur.Names, u.Names)} })
	for _, name := range []string{"b", "a"} {
		b.AddNode(name, func(context.Context, log) (log, error) { return log{[]string{name}}, nil }).AddEdge(name, statgraph.End)
	}
	g, err := b.AddEdge(statgraph.Start, "b").
		AddRoutes(statgraph.Start, func(context.Context, log) []string { return []string{"a"} }, map[string]string{"a": "a"}).
		Compile()
	require.NoError(t, err)
	var first []string
	for ev, err := range g.Stream(context.Background(), log{}, statgraph.WithEvents(statgraph.EventStepStart)) {
		require.NoError(t, err)
		if ev.Kind == statgraph.EventStepStart && first == nil {
			first = ev.Nodes
		}
	}
	require.Equal(t, []string{"a", "b"}, first)
	out, err := g.Invoke(context.Background(), log{})
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, out.Names)
	compiled, err := checkSeedErr(42)
	require.True(t, compiled)
	require.NoError(t, err)
}
