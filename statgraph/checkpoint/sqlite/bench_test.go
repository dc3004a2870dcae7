package sqlite

import (
	"context"
	"database/sql"
	"slices"
	"testing"
	"time"

	"github.com/statgraph/statgraph/statgraph"
)

// benchCheckpoint is a checkpoint as the engine writes it after a W1 retry
// step: a delta state, a one-node frontier, counters and engine bookkeeping.
func benchCheckpoint(id int64) *statgraph.Checkpoint {
	return &statgraph.Checkpoint{
		Thread:   "bench-thread",
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

// benchRowBytes is the checkpoint's row as one blob: the bytes a bare
// insert writes to match Put.
func benchRowBytes(b *testing.B) []byte {
	args, err := rowArgs(1, benchCheckpoint(1))
	if err != nil {
		b.Fatal(err)
	}
	var row []byte
	for _, a := range args {
		switch v := a.(type) {
		case string:
			row = append(row, v...)
		case []byte:
			row = append(row, v...)
		default:
			row = append(row, 0, 0, 0, 0, 0, 0, 0, 0)
		}
	}
	return row
}

func BenchmarkPut(b *testing.B) {
	s, _ := openTest(b)
	ctx := context.Background()
	cps := make([]*statgraph.Checkpoint, 0, 1024)
	id := int64(0)
	b.ReportAllocs()
	for b.Loop() {
		id++
		if len(cps) == cap(cps) {
			cps = cps[:0]
		}
		cps = append(cps, benchCheckpoint(id))
		if err := s.Put(ctx, cps[len(cps)-1]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareInsert is the floor Put is measured against: an INSERT and
// COMMIT of the same number of bytes into a plain table, through the store's
// own writer connection (same file, same pragmas, prepared statement).
func BenchmarkBareInsert(b *testing.B) {
	s, _ := openTest(b)
	ctx := context.Background()
	insert := prepareFloor(b, s)
	row := benchRowBytes(b)
	id := int64(0)
	b.ReportAllocs()
	for b.Loop() {
		id++
		if _, err := insert.ExecContext(ctx, id, row); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutOverFloor alternates a Put and a bare insert on one store, so
// that both see the same machine load, and reports the median time of each
// and their ratio (put/floor). Medians keep the rare stall of a WAL
// checkpoint or a busy disk from deciding the ratio.
func BenchmarkPutOverFloor(b *testing.B) {
	s, _ := openTest(b)
	ctx := context.Background()
	insert := prepareFloor(b, s)
	row := benchRowBytes(b)
	var put, floor []time.Duration
	id := int64(0)
	for b.Loop() {
		id++
		cp := benchCheckpoint(id)
		t0 := time.Now()
		if err := s.Put(ctx, cp); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := insert.ExecContext(ctx, id, row); err != nil {
			b.Fatal(err)
		}
		put = append(put, t1.Sub(t0))
		floor = append(floor, time.Since(t1))
	}
	p, f := median(put), median(floor)
	b.ReportMetric(float64(p.Nanoseconds()), "put-ns")
	b.ReportMetric(float64(f.Nanoseconds()), "floor-ns")
	b.ReportMetric(float64(p)/float64(f), "put/floor")
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// prepareFloor creates the floor table in s's file and prepares its insert
// on s's writer connection.
func prepareFloor(b *testing.B, s *Store) *sql.Stmt {
	ctx := context.Background()
	if _, err := s.writer.ExecContext(ctx, "CREATE TABLE floor (id INTEGER PRIMARY KEY, data BLOB)"); err != nil {
		b.Fatal(err)
	}
	stmt, err := s.writer.PrepareContext(ctx, "INSERT INTO floor (id, data) VALUES (?, ?)")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stmt.Close() })
	return stmt
}
