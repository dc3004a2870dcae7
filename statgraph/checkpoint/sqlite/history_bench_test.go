package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/statgraph/statgraph/statgraph"
)

// The benchmarks of this file read threads of 1k, 10k and 100k steps back,
// from SQLite and from the memory checkpointer (encoding, as a durable
// store does), next to a raw read of the same rows in the same run:
//
//	go test -run '^$' -bench 'History|StateRead' -benchtime 3x ./statgraph/checkpoint/sqlite
//
// Two state shapes: "grow" appends one log entry per step (the state grows
// with the thread: checkpoint size, State's chain read, and whole-thread
// History over rows that are almost all small deltas), "flat" keeps a
// bounded window (whole-thread History over rows that are almost all full
// states, as each step rewrites the window).
// Each benchmark reports ns/op, allocations, peak-MiB (the most heap in use
// while it ran, sampled) and a raw read of the same rows run before each op
// (see measure): its median time as raw-ns, its allocations as raw-allocs,
// and the ratios of the medians, x-raw (wall time) and cpu-x-raw (CPU
// time). For SQLite raw is a SELECT of the rows; for the memory store, which
// has no query to run, it is a Range of the same checkpoints with each one's
// bytes copied once (see memRows), the least any read of them costs.

// histState is the state of the benchmark threads.
type histState struct {
	Step   int
	Status string
	Log    []string // grow: one entry per step
	Recent []string // flat: the last four entries
}

func histGraph(tb testing.TB, cp statgraph.Checkpointer, steps int, grow bool) *statgraph.Graph[histState] {
	g, err := statgraph.New[histState]().
		AddNode("step", func(_ context.Context, s histState) (histState, error) {
			s.Step++
			s.Status = "step " + strconv.Itoa(s.Step)
			entry := fmt.Sprintf("entry %06d done", s.Step)
			if grow {
				s.Log = append(s.Log, entry)
			} else {
				r := append([]string{entry}, s.Recent...)
				s.Recent = r[:min(len(r), 4)]
			}
			return s, nil
		}).
		AddEdge(statgraph.Start, "step").
		AddConditionalEdges("step", func(_ context.Context, s histState) string {
			if s.Step >= steps {
				return "end"
			}
			return "again"
		}, map[string]string{"end": statgraph.End, "again": "step"}).
		Compile(statgraph.WithCheckpointer(cp))
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// histThread is a written benchmark thread.
type histThread struct {
	g     *statgraph.Graph[histState]
	store statgraph.Checkpointer
	path  string // SQLite file; "" for memory
	bytes int64  // file size after a checkpoint of the WAL
}

var (
	histMu      sync.Mutex
	histThreads = map[string]*histThread{}
	histDir     string
)

// thread returns the thread of steps steps in kind ("sqlite" or
// "memory"), writing it on first use.
func thread(b *testing.B, kind string, steps int, grow bool) *histThread {
	histMu.Lock()
	defer histMu.Unlock()
	key := fmt.Sprint(kind, steps, grow)
	if t, ok := histThreads[key]; ok {
		return t
	}
	ctx := context.Background()
	t := &histThread{}
	if kind == "memory" {
		t.store = statgraph.NewMemoryCheckpointer(true)
	} else {
		if histDir == "" {
			d, err := os.MkdirTemp("", "statgraph-histbench-")
			if err != nil {
				b.Fatal(err)
			}
			histDir = d
		}
		t.path = filepath.Join(histDir, key+".db")
		s, err := Open(ctx, t.path)
		if err != nil {
			b.Fatal(err)
		}
		t.store = s
	}
	t.g = histGraph(b, t.store, steps, grow)
	if _, err := t.g.Invoke(ctx, histState{}, statgraph.WithThread("t"), statgraph.WithStepLimit(steps+10)); err != nil {
		b.Fatal(err)
	}
	if t.path != "" {
		if _, err := t.store.(*Store).writer.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			b.Fatal(err)
		}
		fi, err := os.Stat(t.path)
		if err != nil {
			b.Fatal(err)
		}
		t.bytes = fi.Size()
	}
	histThreads[key] = t
	return t
}

func TestMain(m *testing.M) {
	code := m.Run()
	if histDir != "" {
		os.RemoveAll(histDir)
	}
	os.Exit(code)
}

// peakHeap samples the heap in use until stop is called, which returns the
// most seen, in MiB above the level at the start.
func peakHeap() (stop func() float64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapInuse, ms.HeapInuse
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() float64 {
		close(done)
		<-finished
		return float64(peak-base) / (1 << 20)
	}
}

// rawRows reads the thread's rows with key >= from (all columns, as bytes)
// and returns how many it read.
func rawRows(b *testing.B, t *histThread, from int64) int {
	rows, err := t.store.(*Store).reader.Query("SELECT "+columns+" FROM checkpoints WHERE key >= ? ORDER BY key", from)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var vals [numColumns]sql.RawBytes
	dst := make([]any, numColumns)
	for i := range vals {
		dst[i] = &vals[i]
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(dst...); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return n
}

// cpuTime is the CPU time the process has used, user and system: unlike
// wall time it does not grow when other processes load the machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// timed runs f and returns its wall and CPU time.
func timed(f func()) (wall, cpu time.Duration) {
	c, w := cpuTime(), time.Now()
	f()
	return time.Since(w), cpuTime() - c
}

// memRows is the memory store's raw read: a Range of the thread's
// checkpoints from ID from on, each one's bytes (state, extra, next,
// counters) copied once into a reused buffer; it returns how many it read.
func memRows(b *testing.B, t *histThread, from int64) int {
	rows, err := t.store.Range(context.Background(), "t", from, 0, 0)
	if err != nil {
		b.Fatal(err)
	}
	buf := memBuf[:0]
	for _, r := range rows {
		buf = append(append(buf, r.State...), r.Extra...)
		for _, n := range r.Next {
			buf = append(buf, n...)
		}
		for k := range r.Counters {
			buf = append(buf, k...)
		}
	}
	memBuf = buf
	return len(rows)
}

var memBuf []byte // memRows' buffer, kept between reads as a driver's would be

// measure runs op in the benchmark loop and reports peak heap and a raw
// read of the rows from key from (SQLite; memory: from checkpoint ID from)
// run before each op with the timer stopped: raw-ns is its median wall
// time, x-raw the median of op's wall times over it, cpu-x-raw the same for
// CPU time (less moved by the other processes of a shared machine),
// raw-allocs its allocations.
func measure(b *testing.B, t *histThread, from int64, op func() error) {
	sqlite := t.path != ""
	raw := func() {
		if sqlite {
			rawRows(b, t, from)
		} else {
			memRows(b, t, from)
		}
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	raw()
	runtime.ReadMemStats(&m1)
	rawAllocs := m1.Mallocs - m0.Mallocs
	var opWall, opCPU, rawWall, rawCPU []time.Duration
	b.ReportAllocs()
	stop := peakHeap()
	for b.Loop() {
		b.StopTimer()
		w, c := timed(raw)
		rawWall, rawCPU = append(rawWall, w), append(rawCPU, c)
		b.StartTimer()
		var err error
		w, c = timed(func() { err = op() })
		if err != nil {
			b.Fatal(err)
		}
		opWall, opCPU = append(opWall, w), append(opCPU, c)
	}
	b.ReportMetric(stop(), "peak-MiB")
	rawMedian := median(rawWall)
	b.ReportMetric(float64(rawMedian.Nanoseconds()), "raw-ns")
	b.ReportMetric(float64(median(opWall))/float64(max(rawMedian, 1)), "x-raw")
	b.ReportMetric(float64(median(opCPU))/float64(max(median(rawCPU), 1)), "cpu-x-raw")
	b.ReportMetric(float64(rawAllocs), "raw-allocs")
	if sqlite {
		b.ReportMetric(float64(t.bytes)/(1<<20), "db-MiB")
	}
}

// memChainStart is where the memory store's raw read of a State or History
// page starts: the Base of checkpoint id (0: the latest), the full state
// it is rebuilt from.
func memChainStart(b *testing.B, t *histThread, id int64) int64 {
	cp, err := t.store.Get(context.Background(), "t", id)
	if err != nil {
		b.Fatal(err)
	}
	return cp.Base
}

var histSizes = []int{1_000, 10_000, 100_000}

// BenchmarkStateRead reads the latest snapshot of a growing thread; raw is
// the rows from its last full state on.
func BenchmarkStateRead(b *testing.B) {
	for _, kind := range []string{"sqlite", "memory"} {
		for _, n := range histSizes {
			b.Run(fmt.Sprintf("%s/steps=%d", kind, n), func(b *testing.B) {
				t := thread(b, kind, n, true)
				var from int64
				if t.path == "" {
					from = memChainStart(b, t, 0)
				} else if err := t.store.(*Store).reader.QueryRow("SELECT max(key) FROM checkpoints WHERE delta = 0").Scan(&from); err != nil {
					b.Fatal(err)
				}
				measure(b, t, from, func() error {
					s, err := t.g.State(context.Background(), "t")
					if err == nil && len(s.State.Log) != n {
						err = fmt.Errorf("state has %d entries, want %d", len(s.State.Log), n)
					}
					return err
				})
			})
		}
	}
}

// BenchmarkHistoryWhole lists every snapshot of a flat thread, whose rows
// are almost all full states; raw is all of its rows.
func BenchmarkHistoryWhole(b *testing.B) {
	for _, kind := range []string{"sqlite", "memory"} {
		for _, n := range histSizes {
			b.Run(fmt.Sprintf("%s/steps=%d", kind, n), func(b *testing.B) {
				t := thread(b, kind, n, false)
				measure(b, t, 0, func() error {
					h, err := t.g.History(context.Background(), "t", 0, 0)
					if err == nil && len(h) != n+1 {
						err = fmt.Errorf("history has %d snapshots, want %d", len(h), n+1)
					}
					return err
				})
			})
		}
	}
}

// BenchmarkHistoryPage lists the newest 100 snapshots of a growing thread;
// raw is the rows from the last full state before the page on.
func BenchmarkHistoryPage(b *testing.B) {
	for _, kind := range []string{"sqlite", "memory"} {
		for _, n := range histSizes {
			b.Run(fmt.Sprintf("%s/steps=%d", kind, n), func(b *testing.B) {
				t := thread(b, kind, n, true)
				var from int64
				if t.path == "" {
					from = memChainStart(b, t, int64(n+1)-99) // the page's oldest checkpoint (IDs 1..n+1)
				} else if err := t.store.(*Store).reader.QueryRow("SELECT max(key) FROM checkpoints WHERE delta = 0 AND key <= (SELECT max(key) - 99 FROM checkpoints)").Scan(&from); err != nil {
					b.Fatal(err)
				}
				measure(b, t, from, func() error {
					h, err := t.g.History(context.Background(), "t", 0, 100)
					if err == nil && (len(h) != 100 || len(h[0].State.Log) != n) {
						err = fmt.Errorf("history has %d snapshots, want 100 ending at %d entries", len(h), n)
					}
					return err
				})
			})
		}
	}
}

// BenchmarkHistoryGrow lists every snapshot of a growing thread, whose rows
// are almost all deltas of one appended entry (delta-heavy); raw is all of
// its rows. Snapshot k holds a state of k entries, so the output is
// quadratic in the steps unless the snapshots share their entries.
func BenchmarkHistoryGrow(b *testing.B) {
	for _, kind := range []string{"sqlite", "memory"} {
		for _, n := range histSizes {
			b.Run(fmt.Sprintf("%s/steps=%d", kind, n), func(b *testing.B) {
				t := thread(b, kind, n, true)
				measure(b, t, 0, func() error {
					h, err := t.g.History(context.Background(), "t", 0, 0)
					switch {
					case err != nil:
					case len(h) != n+1:
						err = fmt.Errorf("history has %d snapshots, want %d", len(h), n+1)
					case len(h[0].State.Log) != n || len(h[n/2].State.Log) != n-n/2 || h[n/2].State.Log[n/4] != fmt.Sprintf("entry %06d done", n/4+1):
						err = fmt.Errorf("history's snapshots hold the wrong entries")
					}
					return err
				})
			})
		}
	}
}
