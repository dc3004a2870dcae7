package statgraph_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

type st struct {
	N   int
	Log []string
}

func step(name string) func(context.Context, st) (st, error) {
	return func(_ context.Context, s st) (st, error) {
		s.N++
		s.Log = append(s.Log, name)
		return s, nil
	}
}

func TestCompileErrors(t *testing.T) {
	noop := step("x")
	route := func(context.Context, st) string { return "a" }
	tests := []struct {
		name  string
		build func() *statgraph.Builder[st]
		want  []string // substrings, each must be one of the problems
	}{
		{"unknown edge target", func() *statgraph.Builder[st] {
			return statgraph.New[st]().AddNode("a", noop).AddEdge(statgraph.Start, "a").AddEdge("a", "b").AddEdge("a", statgraph.End)
		}, []string{`edge a -> b: unknown node "b"`}},
		{"unknown edge source", func() *statgraph.Builder[st] {
			return statgraph.New[st]().AddNode("a", noop).AddEdge(statgraph.Start, "a").AddEdge("zz", "a").AddEdge("a", statgraph.End)
		}, []string{`edge zz -> a: unknown node "zz"`}},
		{"unknown path-map target", func() *statgraph.Builder[st] {
			return statgraph.New[st]().AddNode("a", noop).AddEdge(statgraph.Start, "a").
				AddConditionalEdges("a", route, map[string]string{"a": statgraph.End, "b": "nowhere"})
		}, []string{`path "b" leads to unknown node "nowhere"`}},
		{"conditional edges from unknown node", func() *statgraph.Builder[st] {
			return statgraph.New[st]().AddNode("a", noop).AddEdge(statgraph.Start, "a").AddEdge("a", statgraph.End).
				AddConditionalEdges("ghost", route, map[string]string{"a": "a"})
		}, []string{`conditional edges from "ghost": unknown node`}},
		{"duplicate node", func() *statgraph.Builder[st] {
			return statgraph.New[st]().AddNode("a", noop).AddNode("a", noop).AddEdge(statgraph.Start, "a").AddEdge("a", statgraph.End)
		}, []string{`AddNode("a"): a node with this name already exists`}},
		{"reserved names", func() *statgraph.Builder[st] {
			return statgraph.New[st]().AddNode(statgraph.Start, noop).AddNode(statgraph.End, noop).AddNode("a", noop).
				AddEdge(statgraph.Start, "a").AddEdge("a", statgraph.End)
		}, []string{`AddNode("__start__"): the name is reserved`, `AddNode("__end__"): the name is reserved`}},
		{"empty name and nil function", func() *statgraph.Builder[st] {
			return statgraph.New[st]().AddNode("", noop).AddNode("b", nil).AddNode("a", noop).AddEdge(statgraph.Start, "a").AddEdge("a", statgraph.End)
		}, []string{"AddNode: empty node name", `AddNode("b"): nil function`}},
		{"nothing leaves start", func() *statgraph.Builder[st] {
			return statgraph.New[st]().AddNode("a", noop).AddEdge("a", statgraph.End)
		}, []string{"nothing leaves __start__", `node "a" is unreachable from __start__`}},
		{"unreachable node", func() *statgraph.Builder[st] {
			return statgraph.New[st]().AddNode("a", noop).AddNode("island", noop).AddEdge(statgraph.Start, "a").
				AddEdge("a", statgraph.End).AddEdge("island", statgraph.End)
		}, []string{`node "island" is unreachable from __start__`}},
		{"cannot reach end", func() *statgraph.Builder[st] {
			return statgraph.New[st]().AddNode("a", noop).AddNode("b", noop).AddEdge(statgraph.Start, "a").
				AddEdge("a", "b").AddEdge("b", "a").AddEdge("a", statgraph.End).AddNode("sink", noop).AddEdge("b", "sink")
		}, []string{`node "sink" cannot reach __end__`}},
		{"edge out of end and into start", func() *statgraph.Builder[st] {
			return statgraph.New[st]().AddNode("a", noop).AddEdge(statgraph.Start, "a").AddEdge("a", statgraph.End).
				AddEdge(statgraph.End, "a").AddEdge("a", statgraph.Start)
		}, []string{"no edge may leave __end__", "no edge may enter __start__"}},
		{"nil router and empty path map", func() *statgraph.Builder[st] {
			return statgraph.New[st]().AddNode("a", noop).AddEdge(statgraph.Start, "a").AddEdge("a", statgraph.End).
				AddConditionalEdges("a", nil, map[string]string{"x": "a"}).
				AddConditionalEdges("a", route, nil)
		}, []string{`AddConditionalEdges("a"): nil router`, `AddConditionalEdges("a"): empty path map`}},
		{"interrupt of unknown node, no checkpointer", func() *statgraph.Builder[st] {
			return statgraph.New[st]().AddNode("a", noop).AddEdge(statgraph.Start, "a").AddEdge("a", statgraph.End)
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var opts []statgraph.CompileOption
			want := tc.want
			if want == nil {
				opts = append(opts, statgraph.WithInterruptBefore("ghost"))
				want = []string{`WithInterruptBefore: unknown node "ghost"`, "interrupts need a checkpointer"}
			}
			g, err := tc.build().Compile(opts...)
			require.Nil(t, g)
			joined, ok := err.(interface{ Unwrap() []error })
			require.True(t, ok, "got %v; want an error with one error per problem", err)
			var problems []string
			for _, e := range joined.Unwrap() {
				problems = append(problems, e.Error())
			}
			for _, w := range want {
				found := false
				for _, p := range problems {
					if strings.Contains(p, w) {
						found = true
					}
				}
				require.True(t, found, "problem %q not among %q", w, problems)
			}
			require.Len(t, problems, len(want), "problems: %q", problems)
		})
	}
}

func TestCompileListsEveryProblemInOneError(t *testing.T) {
	_, err := statgraph.New[st]().AddNode("a", nil).AddEdge("x", "y").Compile()
	require.ErrorContains(t, err, "3 problems")
	require.ErrorContains(t, err, "nil function")
	require.ErrorContains(t, err, `unknown node "x"`)
	require.ErrorContains(t, err, "nothing leaves")
}

func TestBuilderChangesAfterCompileDoNotAffectGraph(t *testing.T) {
	b := statgraph.New[st]().AddNode("a", step("a")).AddEdge(statgraph.Start, "a").AddEdge("a", statgraph.End)
	g, err := b.Compile()
	require.NoError(t, err)
	b.AddNode("b", step("b")).AddEdge("a", "b").AddEdge("b", statgraph.End)
	out, err := g.Invoke(context.Background(), st{})
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, out.Log)
}
