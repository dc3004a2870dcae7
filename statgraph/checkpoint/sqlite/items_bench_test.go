package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/statgraph/statgraph/statgraph/store"
)

// BenchmarkItemStore measures ItemStore's Put, Get and Search against the
// same operations written by hand in SQL over the same table and rows
// (BenchmarkItemStore/raw-*): what the Store's validation, encoding and
// expiry bookkeeping cost. Search finds the 10 newest of 1,000 items
// whose "kind" field is "lint" under one namespace prefix.
func BenchmarkItemStore(b *testing.B) {
	ctx := context.Background()
	s, err := OpenItemStore(ctx, filepath.Join(b.TempDir(), "store.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	for i := range 1000 {
		ns := []string{"lessons", fmt.Sprintf("repo%d", i%10)}
		kind := []string{"lint", "test", "slow"}[i%3]
		if err := s.Put(ctx, store.Item{Namespace: ns, Key: fmt.Sprintf("k%d", i), Value: map[string]any{"kind": kind, "n": i, "note": "go vet ./... fails on printf verbs"}}); err != nil {
			b.Fatal(err)
		}
	}
	ns := []string{"lessons", "repo3"}
	nsText, _ := store.NamespaceText(ns)
	value := map[string]any{"kind": "lint", "n": 1, "note": "gofmt the file"}
	b.Run("put", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if err := s.Put(ctx, store.Item{Namespace: ns, Key: fmt.Sprintf("new%d", i%100), Value: value}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw-put", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			text, err := json.Marshal(value)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.writer.ExecContext(ctx, `INSERT INTO store_items (ns, key, value, created, updated, expires, ttl)
				VALUES (?1, ?2, ?3, ?4, ?4, NULL, 0)
				ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, updated = excluded.updated`,
				nsText, fmt.Sprintf("new%d", i%100), string(text), int64(i)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("get", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := s.Get(ctx, ns, fmt.Sprintf("k%d", 3+10*(i%100))); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw-get", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			var text string
			if err := s.reader.QueryRowContext(ctx, `SELECT value FROM store_items WHERE ns = ? AND key = ?`,
				nsText, fmt.Sprintf("k%d", 3+10*(i%100))).Scan(&text); err != nil {
				b.Fatal(err)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(text), &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	q := store.Query{Filter: map[string]any{"kind": "lint"}}
	b.Run("search", func(b *testing.B) {
		for b.Loop() {
			items, err := s.Search(ctx, []string{"lessons"}, q)
			if err != nil || len(items) != 10 {
				b.Fatal(len(items), err)
			}
		}
	})
	b.Run("raw-search", func(b *testing.B) {
		for b.Loop() {
			rows, err := s.reader.QueryContext(ctx, `SELECT ns, key, value FROM store_items
				WHERE ns >= ? AND ns < ? AND json_extract(value, '$.kind') = ?
				ORDER BY updated DESC LIMIT 10`, "lessons", "lessons\x20", "lint")
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for rows.Next() {
				var ns, key, text string
				if err := rows.Scan(&ns, &key, &text); err != nil {
					b.Fatal(err)
				}
				var v map[string]any
				if err := json.Unmarshal([]byte(text), &v); err != nil {
					b.Fatal(err)
				}
				n++
			}
			rows.Close()
			if n != 10 {
				b.Fatal(n)
			}
		}
	})
}
