package statgraph

import (
	"context"
	"strings"
	"testing"
	"time"
)

type query struct {
	Q      string
	Answer string
}

// Mirrors LangGraph's test_node_cache (test_pregel.py): a node with a cache
// policy runs once per key while the entry is fresh; a hit skips the node
// and gives its earlier update; after the TTL it runs again.
func TestNodeCacheHitSkipsNodeUntilExpiry(t *testing.T) {
	now := time.Unix(1000, 0)
	cacheNow = func() time.Time { return now }
	t.Cleanup(func() { cacheNow = time.Now })

	for _, tc := range []struct {
		name string
		opts []NodeOption
	}{
		{"input key", []NodeOption{WithCache(time.Minute), WithInputKey(func(s query) string { return s.Q })}},
		{"encoded state", []NodeOption{WithCache(time.Minute)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			g, err := New[query]().
				AddNode("answer", func(_ context.Context, s query) (query, error) {
					calls++
					s.Answer = strings.ToUpper(s.Q)
					return s, nil
				}, tc.opts...).
				AddEdge(Start, "answer").AddEdge("answer", End).Compile()
			if err != nil {
				t.Fatal(err)
			}
			ask := func(q string, wantCalls int) {
				t.Helper()
				s, err := g.Invoke(context.Background(), query{Q: q})
				if err != nil || s.Answer != strings.ToUpper(q) || calls != wantCalls {
					t.Fatalf("ask %q: %+v, %v, node ran %d times; want %d", q, s, err, calls, wantCalls)
				}
			}
			ask("a", 1)
			ask("a", 1) // hit: the node does not run
			ask("b", 2) // another key
			now = now.Add(59 * time.Second)
			ask("a", 2) // still fresh
			now = now.Add(2 * time.Second)
			ask("a", 3) // expired: runs again
			ask("a", 3)
		})
	}
}

func TestNodeCacheOptionsChecked(t *testing.T) {
	_, err := New[query]().
		AddNode("x", func(_ context.Context, s query) (query, error) { return s, nil }, WithInputKey(func(s query) string { return s.Q })).
		AddEdge(Start, "x").AddEdge("x", End).Compile()
	if err == nil || !strings.Contains(err.Error(), `AddNode("x"): WithInputKey on a node is its cache key: add WithCache(ttl)`) {
		t.Fatalf("WithInputKey without WithCache: %v", err)
	}
}
