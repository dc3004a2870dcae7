package sqlite

import (
	"path/filepath"
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
