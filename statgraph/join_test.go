package statgraph_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// unevenBranches builds Start -> a -> {b, c1 -> c2 -> c3} and a join of b and
// c3 into d, which records how many updates it saw. c2 fails while *fail.
func unevenBranches(calls *counter, fail *bool) *statgraph.Builder[st] {
	b := statgraph.New[st]().SetReducer(appendReducer)
	for _, name := range []string{"a", "b", "c1", "c2", "c3", "d"} {
		b.AddNode(name, func(_ context.Context, s st) (st, error) {
			calls.inc(name)
			if name == "c2" && *fail {
				return st{}, errors.New("c2 crashed")
			}
			if name == "d" {
				return st{N: len(s.Log), Log: []string{"d"}}, nil
			}
			return st{Log: []string{name}}, nil
		})
	}
	return b.AddEdge(statgraph.Start, "a").AddEdge("a", "b").AddEdge("a", "c1").
		AddEdge("c1", "c2").AddEdge("c2", "c3").
		AddJoin([]string{"b", "c3"}, "d").AddEdge("d", statgraph.End)
}

// Mirrors LangGraph's test_pregel.py
// test_in_one_fan_out_state_graph_waiting_edge (add_edge([a, b], c)) and the
// defer docs' branches of different lengths: the join runs once, after
// both branches, with both updates.
func TestJoinAfterUnevenBranchesRunsOnce(t *testing.T) {
	var calls counter
	fail := false
	g := mustCompile(t, unevenBranches(&calls, &fail))
	out, err := g.Invoke(context.Background(), st{})
	require.NoError(t, err)
	require.Equal(t, 1, calls.get("d"))
	require.Equal(t, []string{"a", "b", "c1", "c2", "c3", "d"}, out.Log)
	require.Equal(t, 5, out.N, "d saw every update of both branches")
	require.Contains(t, g.Mermaid(), "c3 -- join --> d")
}

// The join's waiting set is in the checkpoint: a run that crashes on the
// long branch after b arrived resumes and still runs d once, after c3.
func TestJoinWaitingSetSurvivesResume(t *testing.T) {
	savers(t, func(t *testing.T, cp statgraph.Checkpointer) {
		var calls counter
		fail := true
		g := mustCompile(t, unevenBranches(&calls, &fail), statgraph.WithCheckpointer(cp))
		ctx := context.Background()
		_, err := g.Invoke(ctx, st{}, statgraph.WithThread("j"))
		require.ErrorContains(t, err, "c2 crashed")
		require.Equal(t, 1, calls.get("b"))

		// A fresh graph value, as after a restart of the process.
		g = mustCompile(t, unevenBranches(&calls, &fail), statgraph.WithCheckpointer(cp))
		fail = false
		out, err := g.Invoke(ctx, st{}, statgraph.WithThread("j"))
		require.NoError(t, err)
		require.Equal(t, 1, calls.get("d"))
		require.Equal(t, 1, calls.get("b"))
		require.Equal(t, []string{"a", "b", "c1", "c2", "c3", "d"}, out.Log)
	})
}

func TestJoinCompileErrors(t *testing.T) {
	b := statgraph.New[st]().AddNode("a", step("a")).AddNode("b", step("b")).
		AddEdge(statgraph.Start, "a").AddEdge(statgraph.Start, "b").
		AddJoin([]string{"a", "ghost"}, "b").AddJoin([]string{"a", "a"}, statgraph.End).
		AddJoin(nil, "b").AddEdge("b", statgraph.End).AddEdge("a", statgraph.End)
	_, err := b.Compile()
	require.ErrorContains(t, err, `unknown node "ghost"`)
	require.ErrorContains(t, err, `"a" is listed twice`)
	require.ErrorContains(t, err, `AddJoin("b"): no source nodes`)
	_, err = statgraph.New[st]().AddNode("__x", step("x")).Compile()
	require.ErrorContains(t, err, "reserved for the engine")
}
