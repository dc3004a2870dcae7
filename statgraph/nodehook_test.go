package statgraph_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

type hookKey struct{}

// TestNodeHookWrapsEachAttempt: the hook sees every attempt of every node
// (a retried one twice, a subgraph's node by its path), the node runs with
// the ctx the hook returned, and the end function gets the attempt's error.
func TestNodeHookWrapsEachAttempt(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	hook := statgraph.WithNodeHook(func(ctx context.Context, node string, step, attempt int) (context.Context, func(error)) {
		tag := fmt.Sprintf("%s s%d a%d", node, step, attempt)
		return context.WithValue(ctx, hookKey{}, tag), func(err error) {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, fmt.Sprintf("%s err=%v", tag, err != nil))
		}
	})
	seen := func(ctx context.Context) string {
		v, _ := ctx.Value(hookKey{}).(string)
		return v
	}
	child := mustCompile(t, statgraph.New[st]().
		AddNode("inner", func(ctx context.Context, s st) (st, error) {
			require.Equal(t, "outer|inner s1 a1", seen(ctx))
			return s, nil
		}).
		AddEdge(statgraph.Start, "inner").AddEdge("inner", statgraph.End))
	tries := 0
	b := statgraph.New[st]().
		AddNode("flaky", func(ctx context.Context, s st) (st, error) {
			tries++
			require.Equal(t, fmt.Sprintf("flaky s1 a%d", tries), seen(ctx), "the node runs with the hook's ctx")
			require.Equal(t, tries, statgraph.RuntimeOf(ctx).Attempt, "and still finds its run through it")
			if tries == 1 {
				return s, errors.New("transient")
			}
			return s, nil
		}, statgraph.WithRetry(statgraph.RetryPolicy{InitialInterval: time.Millisecond})).
		AddEdge(statgraph.Start, "flaky").AddEdge("flaky", "outer").AddEdge("outer", statgraph.End)
	statgraph.AddSubgraph(b, "outer", child, func(s st) st { return s }, func(p, c st) st { return p })
	g := mustCompile(t, b)

	_, err := g.Invoke(context.Background(), st{}, hook)
	require.NoError(t, err)
	require.Equal(t, []string{
		"flaky s1 a1 err=true",
		"flaky s1 a2 err=false",
		"outer|inner s1 a1 err=false",
		"outer s2 a1 err=false",
	}, calls)
}
