package cache_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/statgraph/statgraph/statgraph/cache"
)

// keys reports which of names are held in ns of c.
func keys(t *testing.T, c cache.Cache, ns string, names ...string) []string {
	t.Helper()
	var out []string
	for _, k := range names {
		if _, ok, err := c.Get(context.Background(), ns, k); err != nil {
			t.Fatal(err)
		} else if ok {
			out = append(out, k)
		}
	}
	return out
}

func set(t *testing.T, c cache.Cache, ns, key, value string, ttl time.Duration) {
	t.Helper()
	if err := c.Set(context.Background(), ns, key, []byte(value), ttl); err != nil {
		t.Fatal(err)
	}
}

// TestMemoryEvictsLeastRecentlyUsed: past MaxEntries the least recently
// used entry goes, a Get counting as a use.
func TestMemoryEvictsLeastRecentlyUsed(t *testing.T) {
	c := &cache.Memory{MaxEntries: 3}
	for _, k := range []string{"a", "b", "c"} {
		set(t, c, "n", k, k, 0)
	}
	if got := keys(t, c, "n", "a"); !slices.Equal(got, []string{"a"}) { // a is now the most recent
		t.Fatalf("got %v; want [a]", got)
	}
	set(t, c, "n", "d", "d", 0) // evicts b, the least recently used
	set(t, c, "n", "e", "e", 0) // evicts c
	if got, want := keys(t, c, "n", "a", "b", "c", "d", "e"), []string{"a", "d", "e"}; !slices.Equal(got, want) {
		t.Fatalf("got %v; want %v", got, want)
	}
	if c.Len() != 3 {
		t.Fatalf("Len %d; want 3", c.Len())
	}
}

// TestMemoryBoundedByBytes: past MaxBytes (namespace, key and value
// counted) the least recently used entries go; a value over the bound on
// its own is not kept and drops the stale one.
func TestMemoryBoundedByBytes(t *testing.T) {
	c := &cache.Memory{MaxEntries: -1, MaxBytes: 30} // each entry below is 1+1+8 = 10 bytes
	for _, k := range []string{"a", "b", "c"} {
		set(t, c, "n", k, "12345678", 0)
	}
	keys(t, c, "n", "a")
	set(t, c, "n", "d", "12345678", 0)
	if got, want := keys(t, c, "n", "a", "b", "c", "d"), []string{"a", "c", "d"}; !slices.Equal(got, want) {
		t.Fatalf("got %v; want %v", got, want)
	}
	set(t, c, "n", "a", string(make([]byte, 40)), 0)
	if got, want := keys(t, c, "n", "a", "c", "d"), []string{"c", "d"}; !slices.Equal(got, want) {
		t.Fatalf("after an oversized value: got %v; want %v", got, want)
	}
}

// TestMemoryTTL: an entry is fresh until its TTL runs out on the cache's
// clock; a zero TTL never expires.
func TestMemoryTTL(t *testing.T) {
	now := time.Unix(1000, 0)
	c := &cache.Memory{Now: func() time.Time { return now }}
	set(t, c, "n", "short", "v", time.Minute)
	set(t, c, "n", "forever", "v", 0)
	now = now.Add(59 * time.Second)
	if got := keys(t, c, "n", "short", "forever"); len(got) != 2 {
		t.Fatalf("at 59s: %v; want both", got)
	}
	now = now.Add(time.Second)
	if got, want := keys(t, c, "n", "short", "forever"), []string{"forever"}; !slices.Equal(got, want) {
		t.Fatalf("at 60s: %v; want %v", got, want)
	}
}

// TestMemoryClear: Clear with namespaces removes only theirs; without,
// everything.
func TestMemoryClear(t *testing.T) {
	var c cache.Memory
	ctx := context.Background()
	for _, ns := range []string{"x", "y", "z"} {
		set(t, &c, ns, "k", "v", 0)
	}
	if err := c.Clear(ctx, "x", "z"); err != nil {
		t.Fatal(err)
	}
	for ns, want := range map[string]int{"x": 0, "y": 1, "z": 0} {
		if got := len(keys(t, &c, ns, "k")); got != want {
			t.Errorf("namespace %s: %d entries; want %d", ns, got, want)
		}
	}
	if err := c.Clear(ctx); err != nil || c.Len() != 0 {
		t.Fatalf("Clear(): %v, %d entries left", err, c.Len())
	}
}
