package statgraph_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// agent is a command node that passes the conversation to the other agent
// until three turns were taken, then ends.
func agent(calls *counter, name, other string) func(context.Context, st) (statgraph.Command[st], error) {
	return func(_ context.Context, s st) (statgraph.Command[st], error) {
		calls.inc(name)
		next := other
		if s.N+1 >= 3 {
			next = statgraph.End
		}
		return statgraph.Command[st]{Update: st{N: 1, Log: []string{name}}, Goto: []string{next}}, nil
	}
}

// Mirrors LangGraph's test_pregel.py test_command_goto_with_static_breakpoints
// and the multi-agent hand-off how-to: each agent returns its update and
// the agent to go to next, without a router.
func TestCommandHandOffBetweenAgents(t *testing.T) {
	var calls counter
	b := statgraph.New[st]().SetReducer(appendReducer).
		AddCommandNode("alice", agent(&calls, "alice", "bob"), []string{"bob", statgraph.End}).
		AddCommandNode("bob", agent(&calls, "bob", "alice"), []string{"alice", statgraph.End}).
		AddEdge(statgraph.Start, "alice")
	g := mustCompile(t, b)
	out, err := g.Invoke(context.Background(), st{})
	require.NoError(t, err)
	require.Equal(t, []string{"alice", "bob", "alice"}, out.Log)
	require.Contains(t, draw(t, g, "mermaid"), "alice -.-> bob")

	var gotos []string
	for ev, err := range g.Stream(context.Background(), st{}) {
		require.NoError(t, err)
		if ev.Kind == statgraph.EventRoute && ev.Key == "goto" {
			gotos = append(gotos, ev.Node+">"+ev.To)
		}
	}
	require.Equal(t, []string{"alice>bob", "bob>alice", "alice>" + statgraph.End}, gotos)
}

func TestCommandGotoIsChecked(t *testing.T) {
	b := statgraph.New[st]().
		AddCommandNode("a", func(context.Context, st) (statgraph.Command[st], error) {
			return statgraph.Command[st]{Goto: []string{"c"}}, nil
		}, []string{"b"}).
		AddNode("b", step("b")).AddNode("c", step("c")).
		AddEdge(statgraph.Start, "a").AddEdge("b", "c").AddEdge("c", statgraph.End)
	_, err := mustCompile(t, b).Invoke(context.Background(), st{})
	require.ErrorIs(t, err, statgraph.ErrUnknownRoute)
	require.ErrorContains(t, err, `command node "a" went to "c"; its declared destinations are b`)

	_, err = statgraph.New[st]().AddCommandNode("a", func(context.Context, st) (statgraph.Command[st], error) {
		return statgraph.Command[st]{}, nil
	}, []string{"ghost"}).AddEdge(statgraph.Start, "a").Compile()
	require.ErrorContains(t, err, `AddCommandNode("a"): destination "ghost" is not a node of the graph`)
}

// A command node that finished in a step where a sibling failed is not run
// again on resume, and the run still goes where it said.
func TestCommandGotoSurvivesResume(t *testing.T) {
	savers(t, func(t *testing.T, cp statgraph.Checkpointer) {
		var calls counter
		fail := true
		b := statgraph.New[st]().SetReducer(appendReducer).
			AddCommandNode("cmd", func(context.Context, st) (statgraph.Command[st], error) {
				calls.inc("cmd")
				return statgraph.Command[st]{Update: st{Log: []string{"cmd"}}, Goto: []string{"target"}}, nil
			}, []string{"target", "other"}).
			AddNode("flaky", func(context.Context, st) (st, error) {
				calls.inc("flaky")
				if fail {
					return st{}, errors.New("flaky failed")
				}
				return st{Log: []string{"flaky"}}, nil
			}).
			AddNode("target", func(context.Context, st) (st, error) { return st{Log: []string{"target"}}, nil }).
			AddNode("other", func(context.Context, st) (st, error) { return st{Log: []string{"other"}}, nil }).
			AddEdge(statgraph.Start, "cmd").AddEdge(statgraph.Start, "flaky").
			AddEdge("flaky", statgraph.End).AddEdge("target", statgraph.End).AddEdge("other", statgraph.End)
		g := mustCompile(t, b, statgraph.WithCheckpointer(cp))
		ctx := context.Background()
		_, err := g.Invoke(ctx, st{}, statgraph.WithThread("cmd"))
		require.ErrorContains(t, err, "flaky failed")
		fail = false
		out, err := g.Invoke(ctx, st{}, statgraph.WithThread("cmd"))
		require.NoError(t, err)
		require.Equal(t, 1, calls.get("cmd"))
		require.Equal(t, []string{"cmd", "flaky", "target"}, out.Log)
	})
}
