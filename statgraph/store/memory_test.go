package store_test

import (
	"testing"
	"time"

	"github.com/statgraph/statgraph/statgraph/store"
	"github.com/statgraph/statgraph/statgraph/store/storetest"
)

// TestConformance runs the Store conformance suite on Memory.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
		return store.NewMemory(store.WithClock(now))
	})
}
