package statgraph_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// flakyWithFallback builds Start -> call -> done, where call always fails
// and has two attempts, with "recover" as its error handler.
func flakyWithFallback(calls *counter, seen *[]string) *statgraph.Builder[st] {
	return statgraph.New[st]().SetReducer(appendReducer).
		AddNode("call", func(context.Context, st) (st, error) {
			calls.inc("call")
			return st{Log: []string{"call"}}, errors.New("service down")
		}, statgraph.WithRetry(statgraph.RetryPolicy{MaxAttempts: 2, InitialInterval: time.Millisecond}),
			statgraph.WithFallback("recover")).
		AddNode("recover", func(ctx context.Context, s st) (st, error) {
			calls.inc("recover")
			err := statgraph.RuntimeOf(ctx).Fallback
			if err == nil {
				return st{}, errors.New("recover ran without an error to handle")
			}
			*seen = append(*seen, err.Error())
			return st{Log: []string{"recovered"}}, nil
		}).
		AddNode("done", func(context.Context, st) (st, error) { return st{Log: []string{"done"}}, nil }).
		AddEdge(statgraph.Start, "call").AddEdge("call", "done").
		AddEdge("recover", statgraph.End).AddEdge("done", statgraph.End)
}

// LangGraph has no node-level error handler; this is its RetryPolicy
// behaviour (attempts used up) followed by the handler the issue asks for:
// the fallback node runs with the error, and the failed node's update and
// edges are dropped.
func TestFallbackAfterExhaustedRetries(t *testing.T) {
	var calls counter
	var seen []string
	g := mustCompile(t, flakyWithFallback(&calls, &seen))
	out, err := g.Invoke(context.Background(), st{})
	require.NoError(t, err)
	require.Equal(t, 2, calls.get("call"))
	require.Equal(t, 1, calls.get("recover"))
	require.Equal(t, []string{"recovered"}, out.Log)
	require.Len(t, seen, 1)
	require.Contains(t, seen[0], "service down")
	require.Contains(t, seen[0], `node "call" attempt 2`)
	require.Contains(t, draw(t, g, "mermaid"), "call -. on error .-> recover")
	require.NoError(t, statgraph.RuntimeOf(context.Background()).Fallback)
}

// The error waits for its handler in the checkpoint: when the handler is
// paused before, the resumed run still hands it the error.
func TestFallbackErrorSurvivesResume(t *testing.T) {
	savers(t, func(t *testing.T, cp statgraph.Checkpointer) {
		var calls counter
		var seen []string
		g := mustCompile(t, flakyWithFallback(&calls, &seen), statgraph.WithCheckpointer(cp),
			statgraph.WithInterruptBefore("recover"))
		ctx := context.Background()
		_, err := g.Invoke(ctx, st{}, statgraph.WithThread("fb"))
		require.ErrorIs(t, err, statgraph.ErrInterrupted)
		g = mustCompile(t, flakyWithFallback(&calls, &seen), statgraph.WithCheckpointer(cp),
			statgraph.WithInterruptBefore("recover"))
		out, err := g.Invoke(ctx, st{}, statgraph.WithThread("fb"), statgraph.WithResume(nil))
		require.NoError(t, err)
		require.Equal(t, []string{"recovered"}, out.Log)
		require.Len(t, seen, 1)
		require.Contains(t, seen[0], "service down")
	})
}

func TestFallbackMustBeANode(t *testing.T) {
	_, err := statgraph.New[st]().AddNode("a", step("a"), statgraph.WithFallback("ghost")).
		AddEdge(statgraph.Start, "a").AddEdge("a", statgraph.End).Compile()
	require.ErrorContains(t, err, `node "a": WithFallback("ghost"): the graph has no such node`)
}
