// Package storetest is the conformance suite of store.Store: one set of
// tests that every store (store.NewMemory, the SQLite and Postgres
// ItemStores, and any other) runs from its own tests with
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
//			return openEmptyStore(t, store.WithClock(now))
//		})
//	}
//
// Run covers put, get, delete, search by namespace prefix with filters on
// value fields, limits and offsets, the order of results, listing
// namespaces, invalid arguments, TTL expiry with refresh on read (on a
// clock the suite moves, never sleeping) and concurrent use.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/statgraph/statgraph/statgraph/store"
)

// Open returns a new, empty store reading the time from now, for one
// subtest; it registers the store's closing with t.Cleanup.
type Open func(t *testing.T, now func() time.Time) store.Store

// Clock is a clock the suite moves by hand.
type Clock struct {
	mu sync.Mutex // guards t
	t  time.Time
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// NewClock returns a Clock at a fixed time.
func NewClock() *Clock { return &Clock{t: time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)} }

// Run runs the suite, each test in a subtest with a fresh store and clock.
func Run(t *testing.T, open Open) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store, c *Clock)
	}{
		{"PutGet", testPutGet},
		{"PutReplaceKeepsCreated", testReplace},
		{"Delete", testDelete},
		{"Invalid", testInvalid},
		{"SearchPrefix", testSearchPrefix},
		{"SearchFilter", testSearchFilter},
		{"SearchOrderLimitOffset", testSearchPage},
		{"ListNamespaces", testListNamespaces},
		{"TTLRefreshOnRead", testTTL},
		{"TTLSearchAndList", testTTLSearch},
		{"Concurrent", testConcurrent},
		{"CancelledContext", testCancelled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewClock()
			tt.fn(t, open(t, c.Now), c)
		})
	}
}

func put(t *testing.T, s store.Store, ns []string, key string, v map[string]any, ttl time.Duration) {
	t.Helper()
	if err := s.Put(t.Context(), store.Item{Namespace: ns, Key: key, Value: v, TTL: ttl}); err != nil {
		t.Fatalf("Put(%q, %q): %v", ns, key, err)
	}
}

func get(t *testing.T, s store.Store, ns []string, key string) store.Item {
	t.Helper()
	it, err := s.Get(t.Context(), ns, key)
	if err != nil {
		t.Fatalf("Get(%q, %q): %v", ns, key, err)
	}
	return it
}

func missing(t *testing.T, s store.Store, ns []string, key string) {
	t.Helper()
	if it, err := s.Get(t.Context(), ns, key); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get(%q, %q) = %v, %v; want ErrNotFound", ns, key, it, err)
	}
}

// keys returns "ns/key" for each item, namespace labels joined by ".".
func keys(items []store.Item) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, fmt.Sprintf("%s/%s", join(it.Namespace), it.Key))
	}
	return out
}

func join(ns []string) string {
	s := ""
	for i, l := range ns {
		if i > 0 {
			s += "."
		}
		s += l
	}
	return s
}

func search(t *testing.T, s store.Store, prefix []string, q store.Query) []string {
	t.Helper()
	items, err := s.Search(t.Context(), prefix, q)
	if err != nil {
		t.Fatalf("Search(%q, %+v): %v", prefix, q, err)
	}
	return keys(items)
}

func equal(t *testing.T, what string, got, want any) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: got %v; want %v", what, got, want)
	}
}

func testPutGet(t *testing.T, s store.Store, c *Clock) {
	ns := []string{"users", "ada.lovelace", "prefs"}
	v := map[string]any{"lang": "en", "n": 3, "pi": 1.5, "on": true, "none": nil,
		"list": []any{"a", 2}, "obj": map[string]any{"k": "<&>"}}
	put(t, s, ns, "k1", v, 0)
	it := get(t, s, ns, "k1")
	equal(t, "namespace", it.Namespace, ns)
	equal(t, "key", it.Key, "k1")
	equal(t, "value", it.Value, map[string]any{"lang": "en", "n": float64(3), "pi": 1.5, "on": true, "none": nil,
		"list": []any{"a", float64(2)}, "obj": map[string]any{"k": "<&>"}})
	if !it.Created.Equal(c.Now()) || !it.Updated.Equal(c.Now()) {
		t.Errorf("Created %v, Updated %v; want both %v", it.Created, it.Updated, c.Now())
	}
	if it.TTL != 0 || !it.Expires.IsZero() {
		t.Errorf("an item put without TTL: TTL %v, Expires %v; want zero", it.TTL, it.Expires)
	}
	put(t, s, []string{"empty"}, "nil", nil, 0)
	equal(t, "a nil value", get(t, s, []string{"empty"}, "nil").Value, map[string]any{})
	missing(t, s, ns, "k2")
	missing(t, s, []string{"users", "ada.lovelace"}, "k1")
	missing(t, s, []string{"users"}, "k1")
}

func testReplace(t *testing.T, s store.Store, c *Clock) {
	ns := []string{"a"}
	put(t, s, ns, "k", map[string]any{"v": 1}, 0)
	created := c.Now()
	c.Advance(time.Minute)
	put(t, s, ns, "k", map[string]any{"v": 2}, 0)
	it := get(t, s, ns, "k")
	equal(t, "value", it.Value, map[string]any{"v": float64(2)})
	if !it.Created.Equal(created) || !it.Updated.Equal(c.Now()) {
		t.Errorf("replaced: Created %v, Updated %v; want %v, %v", it.Created, it.Updated, created, c.Now())
	}
}

func testDelete(t *testing.T, s store.Store, c *Clock) {
	ns := []string{"a", "b"}
	put(t, s, ns, "k", map[string]any{"v": 1}, 0)
	put(t, s, ns, "other", map[string]any{"v": 2}, 0)
	if err := s.Delete(t.Context(), ns, "k"); err != nil {
		t.Fatal(err)
	}
	missing(t, s, ns, "k")
	get(t, s, ns, "other")
	if err := s.Delete(t.Context(), ns, "k"); err != nil {
		t.Errorf("deleting a missing item: %v; want nil", err)
	}
	c.Advance(time.Second)
	put(t, s, ns, "k", map[string]any{"v": 3}, 0)
	if it := get(t, s, ns, "k"); !it.Created.Equal(c.Now()) {
		t.Errorf("put after delete: Created %v; want %v (a new item)", it.Created, c.Now())
	}
}

func testInvalid(t *testing.T, s store.Store, _ *Clock) {
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"no namespace", s.Put(ctx, store.Item{Key: "k"})},
		{"empty label", s.Put(ctx, store.Item{Namespace: []string{"a", ""}, Key: "k"})},
		{"control character", s.Put(ctx, store.Item{Namespace: []string{"a\x1fb"}, Key: "k"})},
		{"empty key", s.Put(ctx, store.Item{Namespace: []string{"a"}})},
		{"value not JSON", s.Put(ctx, store.Item{Namespace: []string{"a"}, Key: "k", Value: map[string]any{"f": func() {}}})},
		{"get, no namespace", func() error { _, err := s.Get(ctx, nil, "k"); return err }()},
		{"delete, empty label", s.Delete(ctx, []string{""}, "k")},
		{"search, bad field", func() error {
			_, err := s.Search(ctx, nil, store.Query{Filter: map[string]any{`a"b`: 1}})
			return err
		}()},
		{"search, bad prefix", func() error { _, err := s.Search(ctx, []string{"a", ""}, store.Query{}); return err }()},
	} {
		if !errors.Is(tc.err, store.ErrInvalid) {
			t.Errorf("%s: got %v; want an error wrapping ErrInvalid", tc.name, tc.err)
		}
	}
}

func testSearchPrefix(t *testing.T, s store.Store, c *Clock) {
	for _, ns := range [][]string{{"a"}, {"a", "b"}, {"a", "b", "c"}, {"ab"}, {"a b"}, {"b"}} {
		c.Advance(time.Second)
		put(t, s, ns, "k", map[string]any{"ns": join(ns)}, 0)
	}
	equal(t, "prefix a", search(t, s, []string{"a"}, store.Query{}), []string{"a.b.c/k", "a.b/k", "a/k"})
	equal(t, "prefix a,b", search(t, s, []string{"a", "b"}, store.Query{}), []string{"a.b.c/k", "a.b/k"})
	equal(t, "prefix a,b,c,d", search(t, s, []string{"a", "b", "c", "d"}, store.Query{}), []string{})
	equal(t, "no prefix", search(t, s, nil, store.Query{}), []string{"b/k", "a b/k", "ab/k", "a.b.c/k", "a.b/k", "a/k"})
}

func testSearchFilter(t *testing.T, s store.Store, c *Clock) {
	ns := []string{"f"}
	for key, v := range map[string]map[string]any{
		"str":    {"kind": "lint", "n": 1, "ok": true},
		"str1":   {"kind": "1", "n": 2.5, "ok": false},
		"num":    {"kind": 1, "n": 1.0, "ok": 1},
		"null":   {"kind": nil, "obj": map[string]any{"a": 1, "b": []any{"x"}}},
		"nested": {"kind": "test", "obj": map[string]any{"b": []any{"x"}, "a": 1}},
	} {
		put(t, s, ns, key, v, 0)
	}
	for _, tc := range []struct {
		filter map[string]any
		want   []string
	}{
		{map[string]any{"kind": "lint"}, []string{"f/str"}},
		{map[string]any{"kind": "1"}, []string{"f/str1"}},
		{map[string]any{"kind": 1}, []string{"f/num"}},
		{map[string]any{"kind": 1.0}, []string{"f/num"}},
		{map[string]any{"n": 1}, []string{"f/num", "f/str"}},
		{map[string]any{"ok": true}, []string{"f/str"}},
		{map[string]any{"ok": false}, []string{"f/str1"}},
		{map[string]any{"ok": 1}, []string{"f/num"}},
		{map[string]any{"kind": nil}, []string{"f/null"}},
		{map[string]any{"obj": map[string]any{"a": 1, "b": []any{"x"}}}, []string{"f/nested", "f/null"}},
		{map[string]any{"kind": "test", "obj": map[string]any{"a": 1, "b": []any{"x"}}}, []string{"f/nested"}},
		{map[string]any{"kind": "lint", "n": 2}, []string{}},
		{map[string]any{"absent": "x"}, []string{}},
		{map[string]any{}, []string{"f/nested", "f/null", "f/num", "f/str", "f/str1"}},
	} {
		equal(t, fmt.Sprintf("filter %v", tc.filter), search(t, s, []string{"f"}, store.Query{Filter: tc.filter}), tc.want)
	}
}

func testSearchPage(t *testing.T, s store.Store, c *Clock) {
	ns := []string{"p"}
	for i := range 15 {
		c.Advance(time.Second)
		put(t, s, ns, fmt.Sprintf("k%02d", i), map[string]any{"i": i, "even": i%2 == 0}, 0)
	}
	got := search(t, s, ns, store.Query{})
	equal(t, "default limit", len(got), 10)
	equal(t, "newest first", got[:3], []string{"p/k14", "p/k13", "p/k12"})
	equal(t, "limit, offset", search(t, s, ns, store.Query{Limit: 3, Offset: 2}), []string{"p/k12", "p/k11", "p/k10"})
	equal(t, "filter, limit, offset", search(t, s, ns, store.Query{Filter: map[string]any{"even": true}, Limit: 2, Offset: 1}), []string{"p/k12", "p/k10"})
	equal(t, "offset past the end", search(t, s, ns, store.Query{Offset: 15}), []string{})
	// An update makes an item the most recent; equal times order by key.
	c.Advance(time.Second)
	put(t, s, ns, "k03", map[string]any{"i": 3}, 0)
	put(t, s, ns, "k01", map[string]any{"i": 1}, 0)
	equal(t, "after updates", search(t, s, ns, store.Query{Limit: 3}), []string{"p/k01", "p/k03", "p/k14"})
}

func testListNamespaces(t *testing.T, s store.Store, _ *Clock) {
	for _, ns := range [][]string{{"a", "x", "1"}, {"a", "x", "2"}, {"a", "y"}, {"b", "x"}, {"b", "x", "1"}, {"c"}} {
		put(t, s, ns, "k", nil, 0)
		put(t, s, ns, "k2", nil, 0)
	}
	list := func(q store.NamespaceQuery) []string {
		t.Helper()
		got, err := s.ListNamespaces(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, ns := range got {
			out = append(out, join(ns))
		}
		return out
	}
	equal(t, "all", list(store.NamespaceQuery{}), []string{"a.x.1", "a.x.2", "a.y", "b.x", "b.x.1", "c"})
	equal(t, "prefix", list(store.NamespaceQuery{Prefix: []string{"a"}}), []string{"a.x.1", "a.x.2", "a.y"})
	equal(t, "prefix wildcard", list(store.NamespaceQuery{Prefix: []string{"*", "x"}}), []string{"a.x.1", "a.x.2", "b.x", "b.x.1"})
	equal(t, "suffix", list(store.NamespaceQuery{Suffix: []string{"x"}}), []string{"b.x"})
	equal(t, "suffix wildcard", list(store.NamespaceQuery{Suffix: []string{"x", "*"}}), []string{"a.x.1", "a.x.2", "b.x.1"})
	equal(t, "max depth", list(store.NamespaceQuery{MaxDepth: 2}), []string{"a.x", "a.y", "b.x", "c"})
	equal(t, "limit, offset", list(store.NamespaceQuery{MaxDepth: 1, Limit: 2, Offset: 1}), []string{"b", "c"})
	if err := s.Delete(t.Context(), []string{"c"}, "k"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(t.Context(), []string{"c"}, "k2"); err != nil {
		t.Fatal(err)
	}
	equal(t, "after deleting c's items", list(store.NamespaceQuery{MaxDepth: 1}), []string{"a", "b"})
}

func testTTL(t *testing.T, s store.Store, c *Clock) {
	ns := []string{"t"}
	put(t, s, ns, "short", map[string]any{"v": 1}, time.Minute)
	put(t, s, ns, "forever", map[string]any{"v": 2}, 0)
	start := c.Now()
	it := get(t, s, ns, "short")
	if it.TTL != time.Minute || !it.Expires.Equal(start.Add(time.Minute)) {
		t.Errorf("TTL %v, Expires %v; want 1m0s, %v", it.TTL, it.Expires, start.Add(time.Minute))
	}
	c.Advance(50 * time.Second)
	it = get(t, s, ns, "short") // refreshes: now expires at +110s
	if !it.Expires.Equal(c.Now().Add(time.Minute)) || !it.Updated.Equal(start) {
		t.Errorf("after a read: Expires %v, Updated %v; want %v, %v (a read refreshes the expiry, not Updated)", it.Expires, it.Updated, c.Now().Add(time.Minute), start)
	}
	c.Advance(50 * time.Second)
	get(t, s, ns, "short") // at +100s: alive only because the read at +50s refreshed it
	c.Advance(time.Minute)
	missing(t, s, ns, "short")
	get(t, s, ns, "forever")
	// A put after expiry makes a new item; a put with TTL 0 removes a TTL.
	put(t, s, ns, "short", map[string]any{"v": 3}, time.Minute)
	if it := get(t, s, ns, "short"); !it.Created.Equal(c.Now()) {
		t.Errorf("put after expiry: Created %v; want %v", it.Created, c.Now())
	}
	put(t, s, ns, "short", map[string]any{"v": 4}, 0)
	c.Advance(time.Hour)
	get(t, s, ns, "short")
}

func testTTLSearch(t *testing.T, s store.Store, c *Clock) {
	put(t, s, []string{"a", "x"}, "read", map[string]any{"v": 1}, time.Minute)
	put(t, s, []string{"a", "y"}, "unread", map[string]any{"v": 1}, time.Minute)
	put(t, s, []string{"a", "z"}, "kept", map[string]any{"v": 2}, 0)
	c.Advance(40 * time.Second)
	equal(t, "search before expiry", search(t, s, []string{"a"}, store.Query{Filter: map[string]any{"v": 1}, Limit: 1, Offset: 1}), []string{"a.y/unread"})
	c.Advance(40 * time.Second) // +80s: "read" expired at +60s; "unread" was refreshed by the search at +40s
	equal(t, "search after expiry", search(t, s, []string{"a"}, store.Query{}), []string{"a.y/unread", "a.z/kept"})
	c.Advance(2 * time.Minute)
	equal(t, "search after both expired", search(t, s, nil, store.Query{}), []string{"a.z/kept"})
	got, err := s.ListNamespaces(t.Context(), store.NamespaceQuery{})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "namespaces with live items", got, [][]string{{"a", "z"}})
	n, err := s.Sweep(t.Context())
	if err != nil || n != 2 {
		t.Errorf("Sweep = %d, %v; want 2, nil", n, err)
	}
	if n, err := s.Sweep(t.Context()); err != nil || n != 0 {
		t.Errorf("second Sweep = %d, %v; want 0, nil", n, err)
	}
	get(t, s, []string{"a", "z"}, "kept")
}

func testConcurrent(t *testing.T, s store.Store, _ *Clock) {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			ns := []string{"c", fmt.Sprint(w % 2)}
			for i := range 20 {
				key := fmt.Sprintf("w%d-%d", w, i)
				if err := s.Put(context.Background(), store.Item{Namespace: ns, Key: key, Value: map[string]any{"w": w}}); err != nil {
					errs <- err
					return
				}
				if _, err := s.Get(context.Background(), ns, key); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	items, err := s.Search(t.Context(), []string{"c"}, store.Query{Filter: map[string]any{"w": 3}, Limit: 100})
	if err != nil || len(items) != 20 {
		t.Errorf("Search after concurrent puts: %d items, %v; want 20, nil", len(items), err)
	}
}

func testCancelled(t *testing.T, s store.Store, _ *Clock) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Put(ctx, store.Item{Namespace: []string{"a"}, Key: "k"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a cancelled ctx: %v; want context.Canceled", err)
	}
	if _, err := s.Search(ctx, nil, store.Query{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Search with a cancelled ctx: %v; want context.Canceled", err)
	}
}
