package sqlite

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statgraph/statgraph/statgraph"
)

type cacheQ struct{ Q, A string }

// cacheGraph is Start -> answer -> End, answer cached in c for an hour by
// its question; every run of answer appends its question to the file runs.
func cacheGraph(t *testing.T, c *Cache, runs string) *statgraph.Graph[cacheQ] {
	t.Helper()
	g, err := statgraph.New[cacheQ]().
		AddNode("answer", func(_ context.Context, s cacheQ) (cacheQ, error) {
			f, err := os.OpenFile(runs, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return s, err
			}
			defer f.Close()
			_, err = f.WriteString(s.Q + "\n")
			return cacheQ{Q: s.Q, A: strings.ToUpper(s.Q)}, err
		}, statgraph.WithCache(time.Hour, func(s cacheQ) string { return s.Q }, c)).
		AddEdge(statgraph.Start, "answer").AddEdge("answer", statgraph.End).Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestCacheHelper is the process TestCacheSurvivesTheProcess starts: it
// answers "a" through the cache in the file and exits.
func TestCacheHelper(t *testing.T) {
	dir := os.Getenv("STATGRAPH_CACHE_DIR")
	if dir == "" {
		t.Skip("helper process of TestCacheSurvivesTheProcess; runs only when that test starts it")
	}
	c, err := OpenCache(context.Background(), filepath.Join(dir, "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := cacheGraph(t, c, filepath.Join(dir, "runs")).Invoke(context.Background(), cacheQ{Q: "a"}); err != nil {
		t.Fatal(err)
	}
}

// Mirrors LangGraph's test_node_cache with its SQLite cache: a result
// cached by another process, through a graph compiled there, is a hit here
// (the node does not run, the event is marked Cached); another key runs;
// after Clear of the node's namespace the first key runs again.
func TestCacheSurvivesTheProcess(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCacheHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "STATGRAPH_CACHE_DIR="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("helper process: %v\n%s", err, out)
	}
	runs := filepath.Join(dir, "runs")
	ranSoFar := func() string { b, _ := os.ReadFile(runs); return strings.Join(strings.Fields(string(b)), " ") }
	if got := ranSoFar(); got != "a" {
		t.Fatalf("the helper ran %q; want a", got)
	}
	ctx := context.Background()
	c, err := OpenCache(ctx, filepath.Join(dir, "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	g := cacheGraph(t, c, runs)
	ask := func(q string) (string, bool) {
		t.Helper()
		var out cacheQ
		cached := false
		for ev, err := range g.Stream(ctx, cacheQ{Q: q}, statgraph.WithEvents(statgraph.EventNodeEnd, statgraph.EventRunEnd)) {
			if err != nil {
				t.Fatal(err)
			}
			if ev.Kind == statgraph.EventNodeEnd {
				cached = ev.Cached
			}
			out = ev.State
		}
		return out.A, cached
	}
	if a, cached := ask("a"); a != "A" || !cached || ranSoFar() != "a" {
		t.Fatalf("a here: answer %q, cached %v, runs %q; want A from the other process's entry", a, cached, ranSoFar())
	}
	if a, cached := ask("b"); a != "B" || cached || ranSoFar() != "a b" {
		t.Fatalf("b: answer %q, cached %v, runs %q; want b run", a, cached, ranSoFar())
	}
	if err := c.Clear(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	if _, cached := ask("a"); !cached {
		t.Fatal("clearing another namespace dropped answer's entry")
	}
	if err := c.Clear(ctx, "answer"); err != nil {
		t.Fatal(err)
	}
	if a, cached := ask("a"); a != "A" || cached || ranSoFar() != "a b a" {
		t.Fatalf("a after Clear: answer %q, cached %v, runs %q; want a run again", a, cached, ranSoFar())
	}
}

// TestCacheTTL: an entry is a miss once its TTL ran out on the cache's
// clock, and the next Set deletes it from the file.
func TestCacheTTL(t *testing.T) {
	ctx := context.Background()
	c, err := OpenCache(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	now := time.Unix(1000, 0)
	c.now = func() time.Time { return now }
	if err := c.Set(ctx, "n", "short", []byte("v"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "n", "forever", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	now = now.Add(59 * time.Second)
	if _, ok, err := c.Get(ctx, "n", "short"); err != nil || !ok {
		t.Fatalf("at 59s: %v, %v; want a hit", ok, err)
	}
	now = now.Add(time.Second)
	if _, ok, err := c.Get(ctx, "n", "short"); err != nil || ok {
		t.Fatalf("at 60s: %v, %v; want a miss", ok, err)
	}
	if err := c.Set(ctx, "n", "other", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM node_cache`).Scan(&rows); err != nil || rows != 2 {
		t.Fatalf("rows after the purge: %d, %v; want 2 (forever and other)", rows, err)
	}
	if _, ok, _ := c.Get(ctx, "n", "forever"); !ok {
		t.Fatal("an entry without TTL expired")
	}
}

// TestCacheBoundedAcrossOpens: a Cache bounded by entries drops the least
// recently used entry, with the use recorded in the file: a Get in one
// open of the file keeps its entry in the next open, and an entry not used
// since goes first. A byte bound does the same by size, and a value larger
// than the bound on its own is not kept. As cache.Memory's tests, on the
// file.
func TestCacheBoundedAcrossOpens(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	has := func(c *Cache, keys ...string) string {
		t.Helper()
		var got []string
		for _, k := range keys {
			if _, ok, err := c.Get(ctx, "n", k); err != nil {
				t.Fatal(err)
			} else if ok {
				got = append(got, k)
			}
		}
		return strings.Join(got, " ")
	}
	set := func(c *Cache, key string, n int) {
		t.Helper()
		if err := c.Set(ctx, "n", key, []byte(strings.Repeat("v", n)), 0); err != nil {
			t.Fatal(err)
		}
	}
	c, err := OpenCache(ctx, path, CacheEntries(2))
	if err != nil {
		t.Fatal(err)
	}
	set(c, "a", 1)
	set(c, "b", 1)
	if got := has(c, "a"); got != "a" { // a is now the most recently used
		t.Fatalf("first open: %q; want a", got)
	}
	c.Close()

	c, err = OpenCache(ctx, path, CacheEntries(2))
	if err != nil {
		t.Fatal(err)
	}
	set(c, "c", 1)
	if got := has(c, "a", "b", "c"); got != "a c" {
		t.Fatalf("second open, after setting c: %q; want a c (b least recently used)", got)
	}
	var rows int
	if err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM node_cache`).Scan(&rows); err != nil || rows != 2 {
		t.Fatalf("rows in the file: %d, %v; want 2", rows, err)
	}
	c.Close()

	// Bytes: each entry is 1 (ns) + 1 (key) + 8 (value) = 10 bytes.
	c, err = OpenCache(ctx, path, CacheEntries(-1), CacheBytes(25))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	set(c, "x", 8)
	set(c, "y", 8)
	has(c, "x")
	set(c, "z", 8)
	if got := has(c, "x", "y", "z"); got != "x z" {
		t.Fatalf("byte bound: %q; want x z (y least recently used)", got)
	}
	set(c, "x", 30)
	if got := has(c, "x", "z"); got != "z" {
		t.Fatalf("after a value over the bound: %q; want z (x neither kept nor stale)", got)
	}
}
