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
	require.Contains(t, draw(t, g, "mermaid"), "c3 -- join --> d")
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

// Mirrors LangGraph's test_pregel.py
// test_in_one_fan_out_state_graph_waiting_edge_multiple_cond_edge: a router
// returns two destinations, whose branches (of lengths 2 and 1) meet in a
// waiting join; an undeclared key is refused.
func TestRouterWithSeveralDestinations(t *testing.T) {
	var calls counter
	picks := []string{"analyze", "retrieve2"}
	b := statgraph.New[st]().SetReducer(appendReducer)
	for _, name := range []string{"rewrite", "analyze", "retrieve1", "retrieve2", "qa"} {
		b.AddNode(name, func(context.Context, st) (st, error) {
			calls.inc(name)
			return st{Log: []string{name}}, nil
		})
	}
	b.AddEdge(statgraph.Start, "rewrite").
		AddRoutes("rewrite", func(context.Context, st) []string { return picks },
			map[string]string{"analyze": "analyze", "retrieve2": "retrieve2", "stop": statgraph.End}).
		AddEdge("analyze", "retrieve1").
		AddJoin([]string{"retrieve1", "retrieve2"}, "qa").AddEdge("qa", statgraph.End)
	g := mustCompile(t, b)
	out, err := g.Invoke(context.Background(), st{})
	require.NoError(t, err)
	require.Equal(t, []string{"rewrite", "analyze", "retrieve2", "retrieve1", "qa"}, out.Log)
	require.Equal(t, 1, calls.get("qa"))

	picks = []string{"analyze", "nowhere"}
	_, err = g.Invoke(context.Background(), st{})
	require.ErrorIs(t, err, statgraph.ErrUnknownRoute)
	require.ErrorContains(t, err, `routed to "nowhere"`)
}
