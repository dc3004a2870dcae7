package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statgraph/statgraph/statgraph/store"
	"github.com/statgraph/statgraph/statgraph/store/storetest"
)

// TestItemStoreConformance runs the store.Store conformance suite on a new
// file for each test.
func TestItemStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
		s, err := OpenItemStore(t.Context(), filepath.Join(t.TempDir(), "store.db"), store.WithClock(now))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Error(err)
			}
		})
		return s
	})
}

// TestItemStoreRefusesANewerSchema: a file whose item schema version is
// newer than this build's is refused with a message naming the file and
// both versions, and left as it was; the current version opens.
func TestItemStoreRefusesANewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "items.db")
	s, err := OpenItemStore(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.writer.ExecContext(ctx, `UPDATE store_items_version SET version = 2`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = OpenItemStore(ctx, path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "item store schema version is 2, but this build of statgraph knows versions up to 1") {
		t.Fatalf("opening a newer file: %v; want a refusal naming %s and versions 2 and 1", err, path)
	}
	s, err = OpenItemStore(ctx, path)
	if err == nil {
		s.Close()
		t.Fatal("the refused file was changed")
	}
}
