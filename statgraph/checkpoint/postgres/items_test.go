package postgres

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/statgraph/statgraph/statgraph/checkpoint/postgres/postgrestest"
	"github.com/statgraph/statgraph/statgraph/store"
	"github.com/statgraph/statgraph/statgraph/store/storetest"
)

// TestItemStoreConformance runs the store.Store conformance suite, each
// test in a schema of its own.
func TestItemStoreConformance(t *testing.T) {
	conn := postgrestest.ConnString(t)
	pool, err := pgxpool.New(t.Context(), conn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store {
		s, err := NewItemStore(t.Context(), pool, postgrestest.Schema(t, conn), store.WithClock(now))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
