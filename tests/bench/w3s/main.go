// Command w3s is W3 with the SQLite checkpointer: W1 (the retry loop of
// ../shared/bench-anchors) saving a checkpoint after every super-step into a
// SQLite file in a temporary directory, a fresh thread per invocation. Unit:
// one node execution, which is one super-step and one checkpoint.
//
// It also measures, in the same process and on the same settings (WAL,
// synchronous=NORMAL, one writer connection), the floor: a bare INSERT and
// commit of the same state bytes into a plain table. The result line adds
// floor_us (per row), ratio (per-step cost over W1 ÷ floor) and
// w1_us (the same loop without a checkpointer).
//
//	usage: w3s N [REPS]      (env WARMUP, default 1)
package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	_ "modernc.org/sqlite"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/tests/bench/internal/harness"
)

// recorder passes checkpoints to the store and keeps a copy of the bytes
// each one carried, for the floor measurement.
type recorder struct {
	statgraph.Checkpointer
	mu    sync.Mutex
	blobs [][]byte
}

func (r *recorder) Put(ctx context.Context, cp *statgraph.Checkpoint) error {
	r.mu.Lock()
	r.blobs = append(r.blobs, cp.State)
	r.mu.Unlock()
	return r.Checkpointer.Put(ctx, cp)
}

func main() {
	n := harness.Arg(0, 1000)
	reps := harness.Arg(1, 5)
	warmup := harness.Env("WARMUP", 1)
	dir, err := os.MkdirTemp("", "statgraph-w3s-")
	if err != nil {
		harness.Die("temp dir", err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(dir, "runs.db"))
	if err != nil {
		harness.Die("open store", err)
	}
	defer store.Close()
	rec := &recorder{Checkpointer: store}
	g, err := harness.W1().Compile(statgraph.WithCheckpointer(rec))
	if err != nil {
		harness.Die("compile", err)
	}
	plain, err := harness.W1().Compile()
	if err != nil {
		harness.Die("compile", err)
	}
	limit := statgraph.WithStepLimit(2*n + 10)
	invoke := func(i int, m *harness.Meter) {
		if m != nil {
			m.Start()
		}
		out, err := g.Invoke(ctx, harness.W1State{MaxRetries: n}, limit, statgraph.WithThread(fmt.Sprint("w3s-", i)))
		if m != nil {
			m.Stop()
		}
		if err != nil {
			harness.Die("invoke", err)
		}
		harness.CheckW1(out, n)
	}
	for i := range warmup {
		invoke(-1-i, nil)
	}
	rec.blobs = rec.blobs[:0]
	var m harness.Meter
	for i := range reps {
		invoke(i, &m)
	}
	units := reps * (2*n + 2)

	// The same loop without a checkpointer, for the per-step difference.
	var base harness.Meter
	for range reps {
		base.Start()
		out, err := plain.Invoke(ctx, harness.W1State{MaxRetries: n}, limit)
		base.Stop()
		if err != nil {
			harness.Die("invoke", err)
		}
		harness.CheckW1(out, n)
	}

	floor := bareInserts(ctx, filepath.Join(dir, "floor.db"), rec.blobs)
	perStep := float64(m.Total()-base.Total()) / float64(units) / 1e3
	perRow := float64(floor) / float64(len(rec.blobs)) / 1e3
	harness.Report(harness.Result{
		Workload: "W3S", N: n, Unit: "node_exec", Units: units, Reps: reps, Warmup: warmup,
		Extra: []string{
			"w1_us=" + strconv.FormatFloat(float64(base.Total())/float64(units)/1e3, 'f', 3, 64),
			"ckpt_us=" + strconv.FormatFloat(perStep, 'f', 3, 64),
			"floor_us=" + strconv.FormatFloat(perRow, 'f', 3, 64),
			"ratio=" + strconv.FormatFloat(perStep/perRow, 'f', 2, 64),
			"rows=" + strconv.Itoa(len(rec.blobs)),
		},
	}, &m)
}

// bareInserts inserts each blob as its own autocommitted row into a plain
// table, on the store's settings, and returns the total time.
func bareInserts(ctx context.Context, path string, blobs [][]byte) time.Duration {
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)&_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate")
	if err != nil {
		harness.Die("open floor db", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "CREATE TABLE rows (thread TEXT NOT NULL, id INTEGER NOT NULL, data BLOB, PRIMARY KEY (thread, id))"); err != nil {
		harness.Die("create floor table", err)
	}
	stmt, err := db.PrepareContext(ctx, "INSERT INTO rows (thread, id, data) VALUES (?, ?, ?)")
	if err != nil {
		harness.Die("prepare", err)
	}
	defer stmt.Close()
	t0 := time.Now()
	for i, b := range blobs {
		if _, err := stmt.ExecContext(ctx, "floor", i+1, b); err != nil {
			harness.Die("insert", err)
		}
	}
	return time.Since(t0)
}
