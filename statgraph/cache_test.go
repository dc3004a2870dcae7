package statgraph

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/statgraph/statgraph/statgraph/cache"
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
		{"input key", []NodeOption{WithCache(time.Minute, func(s query) string { return s.Q })}},
		{"encoded state", []NodeOption{WithCache[query](time.Minute, nil)}},
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

// TestNodeCacheOptionsChecked: Compile reports a cache key for another
// state type, and a negative TTL.
func TestNodeCacheOptionsChecked(t *testing.T) {
	for _, tc := range []struct {
		opt  NodeOption
		want string
	}{
		{WithCache(time.Minute, func(s string) string { return s }), `AddNode("x"): WithCache's key takes the graph's state: a func(statgraph.query) string, not a func(string) string`},
		{WithCache[query](-time.Minute, nil), `AddNode("x"): WithCache: negative TTL -1m0s`},
	} {
		_, err := New[query]().
			AddNode("x", func(_ context.Context, s query) (query, error) { return s, nil }, tc.opt).
			AddEdge(Start, "x").AddEdge("x", End).Compile()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v; want an error containing %s", err, tc.want)
		}
	}
}

// A cache hit on an AddCommandNode node goes where the cached command went:
// the hit replays the command's Goto with its update, so the run takes the
// same branch it took when the node ran.
func TestNodeCacheHitReplaysCommandGoto(t *testing.T) {
	calls := 0
	route := func(_ context.Context, s query) (Command[query], error) {
		calls++
		to := "short"
		if len(s.Q) > 3 {
			to = "long"
		}
		return Command[query]{Update: s, Goto: []string{to}}, nil
	}
	mark := func(tag string) func(context.Context, query) (query, error) {
		return func(_ context.Context, s query) (query, error) { s.Answer = tag; return s, nil }
	}
	g, err := New[query]().
		AddCommandNode("route", route, []string{"short", "long"}, WithCache(time.Minute, func(s query) string { return s.Q })).
		AddNode("short", mark("short")).AddNode("long", mark("long")).
		AddEdge(Start, "route").AddEdge("short", End).AddEdge("long", End).Compile()
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		q, want string
		calls   int
	}{{"hello", "long", 1}, {"hello", "long", 1}, {"hi", "short", 2}, {"hi", "short", 2}} {
		s, err := g.Invoke(context.Background(), query{Q: tc.q})
		if err != nil || s.Answer != tc.want || calls != tc.calls {
			t.Fatalf("run %d (%q): %+v, %v, route ran %d times; want answer %q after %d runs", i, tc.q, s, err, calls, tc.want, tc.calls)
		}
	}
}

// Mirrors LangGraph's test_in_one_fan_out_state_graph_waiting_edge_multiple
// with_cache (test_pregel.py): a node served from its cache is marked so
// in the stream (LangGraph's "__metadata__": {"cached": True}); the nodes
// that ran are not.
func TestNodeCacheHitMarkedInEvents(t *testing.T) {
	g, err := New[query]().
		AddNode("rewrite", func(_ context.Context, s query) (query, error) { s.Q = "query: " + s.Q; return s, nil },
			WithCache(time.Hour, func(s query) string { return s.Q })).
		AddNode("qa", func(_ context.Context, s query) (query, error) { s.Answer = s.Q; return s, nil }).
		AddEdge(Start, "rewrite").AddEdge("rewrite", "qa").AddEdge("qa", End).
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	ends := func() []string {
		var out []string
		for ev, err := range g.Stream(context.Background(), query{Q: "weather in sf"}) {
			if err != nil {
				t.Fatal(err)
			}
			if ev.Kind == EventNodeEnd {
				out = append(out, ev.Node+map[bool]string{true: " cached", false: " ran"}[ev.Cached])
			}
		}
		return strings.Fields(strings.Join(out, " "))
	}
	if got := strings.Join(ends(), " "); got != "rewrite ran qa ran" {
		t.Fatalf("first run: %s", got)
	}
	if got := strings.Join(ends(), " "); got != "rewrite cached qa ran" {
		t.Fatalf("second run: %s; want the cache hit marked", got)
	}
}

// Issue 23: the cache is bounded (it kept every distinct input for the life
// of the compiled graph): past cacheCap entries the least recently used is
// dropped.
func TestNodeCacheEvictsLeastRecentlyUsed(t *testing.T) {
	cacheCap = 2
	t.Cleanup(func() { cacheCap = 4096 })
	calls := map[string]int{}
	g, err := New[query]().
		AddNode("answer", func(_ context.Context, s query) (query, error) { calls[s.Q]++; return s, nil },
			WithCache(time.Hour, func(s query) string { return s.Q })).
		AddEdge(Start, "answer").AddEdge("answer", End).Compile()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"a", "b", "a", "c", "a", "b"} {
		if _, err := g.Invoke(context.Background(), query{Q: q}); err != nil {
			t.Fatal(err)
		}
	}
	// a stays (used again before c came), b is evicted by c and runs again.
	if calls["a"] != 1 || calls["b"] != 2 || calls["c"] != 1 {
		t.Fatalf("node runs by key: %v; want a 1, b 2, c 1", calls)
	}
}

// Issue 23: the cache is a seam. Two graphs compiled with one store share
// their nodes' entries (a graph compiled again finds them); the store's
// bound evicts the least recently used across runs; Clear forgets; a hit
// on a command node replays the command's Sends too.
func TestNodeCacheStoreSharedBoundedAndCleared(t *testing.T) {
	store := &cache.Memory{MaxEntries: 2}
	calls := map[string]int{}
	compile := func() *Graph[query] {
		g, err := New[query]().SetReducer(func(cur, u query) query { cur.Answer += u.Answer; return cur }).
			AddCommandNode("answer", func(_ context.Context, s query) (Command[query], error) {
				calls[s.Q]++
				return Command[query]{Update: query{Answer: strings.ToUpper(s.Q)}, Sends: []Send[query]{{To: "echo", Input: query{Q: s.Q}}}}, nil
			}, []string{"echo"}, WithCache(time.Hour, func(s query) string { return s.Q }, store)).
			AddNode("echo", func(_ context.Context, s query) (query, error) { return query{Answer: "+" + s.Q}, nil }).
			AddEdge(Start, "answer").AddEdge("answer", End).AddEdge("echo", End).Compile()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	ask := func(g *Graph[query], q string) {
		t.Helper()
		s, err := g.Invoke(context.Background(), query{Q: q})
		if want := strings.ToUpper(q) + "+" + q; err != nil || s.Answer != want {
			t.Fatalf("ask %q: %+v, %v; want answer %q", q, s, err, want)
		}
	}
	first, second := compile(), compile()
	ask(first, "a")
	ask(second, "a") // the entry first stored
	ask(second, "b")
	ask(first, "a") // a is now more recent than b
	ask(first, "c") // evicts b
	ask(second, "b")
	if calls["a"] != 1 || calls["b"] != 2 || calls["c"] != 1 {
		t.Fatalf("node runs by key: %v; want a 1, b 2, c 1", calls)
	}
	if err := store.Clear(context.Background(), "answer"); err != nil {
		t.Fatal(err)
	}
	ask(first, "a")
	if calls["a"] != 2 {
		t.Fatalf("a ran %d times after Clear; want 2", calls["a"])
	}
}

// TestNodeCacheTwoStoresRefused: WithCache takes at most one store.
func TestNodeCacheTwoStoresRefused(t *testing.T) {
	_, err := New[query]().
		AddNode("x", func(_ context.Context, s query) (query, error) { return s, nil },
			WithCache[query](time.Minute, nil, &cache.Memory{}, &cache.Memory{})).
		AddEdge(Start, "x").AddEdge("x", End).Compile()
	if err == nil || !strings.Contains(err.Error(), `AddNode("x"): WithCache: 2 stores given; give at most one`) {
		t.Fatalf("got %v; want the two stores refused", err)
	}
}
