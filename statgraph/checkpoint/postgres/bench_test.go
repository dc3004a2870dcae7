package postgres

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
)

// benchCheckpoint is a checkpoint as the engine writes it after a W1 retry
// step: a delta state, a one-node frontier, counters and engine bookkeeping.
func benchCheckpoint(thread string, id int64) *statgraph.Checkpoint {
	return &statgraph.Checkpoint{
		Thread:   thread,
		ID:       id,
		Parent:   id - 1,
		Step:     int(id),
		Source:   "loop",
		Created:  time.Now(),
		State:    []byte(`{"s":{"RetryCount":5},"a":{"ErrorHistory":["attempt 5: test TestFoo failed: expected 4, got 5"]}}`),
		Delta:    true,
		Next:     []string{"verifier"},
		Counters: map[string]int{"executor": 5, "planner": 1, "verifier": 5},
		Extra:    []byte(`{"gates":{"verify":5}}`),
	}
}

// benchStores are the stores compared: Postgres on the test server and
// SQLite in a temporary file, with its default durability (a commit is in
// the operating system's cache) and with Full (synced to the device, as a
// Postgres commit is by default).
func benchStores(b *testing.B) []struct {
	name string
	open func(b *testing.B) statgraph.Checkpointer
} {
	return []struct {
		name string
		open func(b *testing.B) statgraph.Checkpointer
	}{
		{"postgres", func(b *testing.B) statgraph.Checkpointer { s, _, _ := openTest(b); return s }},
		{"sqlite", func(b *testing.B) statgraph.Checkpointer { return openSQLite(b) }},
		{"sqlite-full", func(b *testing.B) statgraph.Checkpointer { return openSQLite(b, sqlite.Durability(sqlite.Full)) }},
	}
}

func openSQLite(b *testing.B, opts ...sqlite.Option) *sqlite.Store {
	s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"), opts...)
	require.NoError(b, err)
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkPut stores one checkpoint per iteration, on one thread.
func BenchmarkPut(b *testing.B) {
	for _, st := range benchStores(b) {
		b.Run(st.name, func(b *testing.B) {
			s := st.open(b)
			ctx := context.Background()
			id := int64(0)
			b.ReportAllocs()
			for b.Loop() {
				id++
				if err := s.Put(ctx, benchCheckpoint("bench", id)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGet reads the latest checkpoint of a thread of 1,000.
func BenchmarkGet(b *testing.B) {
	for _, st := range benchStores(b) {
		b.Run(st.name, func(b *testing.B) {
			s := st.open(b)
			ctx := context.Background()
			for id := int64(1); id <= 1000; id++ {
				require.NoError(b, s.Put(ctx, benchCheckpoint("bench", id)))
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Get(ctx, "bench", 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPutOverFloor alternates a Put and a bare INSERT of the same
// bytes into a plain two-column table of the same database, through the
// same pool, so both see the same load, and reports the median of each and
// their ratio (put/floor): what the store adds to the round trip and the
// commit that any write pays.
func BenchmarkPutOverFloor(b *testing.B) {
	s, _, schema := openTest(b)
	ctx := context.Background()
	floor := quote(schema) + ".floor"
	_, err := s.pool.Exec(ctx, "CREATE TABLE "+floor+" (id bigint PRIMARY KEY, data bytea)")
	require.NoError(b, err)
	args, err := rowArgs(1, benchCheckpoint("bench", 1))
	require.NoError(b, err)
	var row []byte
	for _, a := range args {
		switch v := a.(type) {
		case string:
			row = append(row, v...)
		case *string:
			if v != nil {
				row = append(row, *v...)
			}
		case []byte:
			row = append(row, v...)
		default:
			row = append(row, 0, 0, 0, 0, 0, 0, 0, 0)
		}
	}
	var put, bare []time.Duration
	id := int64(0)
	for b.Loop() {
		id++
		t0 := time.Now()
		if err := s.Put(ctx, benchCheckpoint("bench", id)); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := s.pool.Exec(ctx, "INSERT INTO "+floor+" (id, data) VALUES ($1, $2)", id, row); err != nil {
			b.Fatal(err)
		}
		put = append(put, t1.Sub(t0))
		bare = append(bare, time.Since(t1))
	}
	p, f := median(put), median(bare)
	b.ReportMetric(float64(p.Nanoseconds()), "put-ns")
	b.ReportMetric(float64(f.Nanoseconds()), "floor-ns")
	b.ReportMetric(float64(p)/float64(f), "put/floor")
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}
