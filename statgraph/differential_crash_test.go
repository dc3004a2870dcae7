package statgraph_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/postgres"
	"github.com/statgraph/statgraph/statgraph/checkpoint/postgres/postgrestest"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
)

// TestDifferentialCrashOnStores is the differential test's crash
// equivalence on the durable stores: generated graphs run on SQLite and on
// Postgres (with STATGRAPH_TEST_POSTGRES; skipped outside CI without it)
// with one write failing at a random point, the thread then continued as a
// restarted process would, must end with the model's state, error and
// checkpoint counters; under DurabilitySync the node runs beyond the
// uninterrupted run's are at most those of one step (only the interrupted
// step runs again).
func TestDifferentialCrashOnStores(t *testing.T) {
	ctx := context.Background()
	stores := map[string]func(t *testing.T) statgraph.Checkpointer{
		"sqlite": func(t *testing.T) statgraph.Checkpointer {
			st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "fz.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
		"postgres": func(t *testing.T) statgraph.Checkpointer {
			conn := postgrestest.ConnString(t)
			st, err := postgres.Open(ctx, conn, postgres.Schema(postgrestest.Schema(t, conn)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
	graphs := map[string]int{"sqlite": 150, "postgres": 40}
	if testing.Short() {
		graphs = map[string]int{"sqlite": 20, "postgres": 5}
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			st := open(t)
			fresh := func() statgraph.Checkpointer {
				if _, err := st.Delete(ctx, "fz", 0); err != nil {
					t.Fatal(err)
				}
				return st
			}
			done := 0
			for seed := uint64(1); done < graphs[name]; seed++ {
				g := genFrom(seed)
				if g.durability == statgraph.DurabilityExit && seed%2 == 0 {
					continue // exit mode writes little: favour the others
				}
				got, cp, ok := realRun(g, 0, fresh)
				if !ok {
					continue
				}
				done++
				want := refRun(g)
				if d := diff(want, got); d != "" {
					t.Fatalf("seed %d on %s, graph:\n%s%s", seed, name, g, d)
				}
				if cp.writes == 0 {
					continue
				}
				failAt := 1 + int(seed>>8+seed)%cp.writes
				crashed, _, _ := realRun(g, failAt, fresh)
				if !slices.Contains(crashed.trace, "crash") {
					t.Fatalf("seed %d on %s: write %d of %d failed, and no run reported it", seed, name, failAt, cp.writes)
				}
				if d := crashDiff(want, crashed); d != "" {
					t.Fatalf("seed %d on %s, write %d of %d failing, graph:\n%s%s\ntrace:\n%s", seed, name, failAt, cp.writes, g, d, strings.Join(crashed.trace, "\n"))
				}
				if g.durability == statgraph.DurabilitySync {
					if extra, step := total(crashed.runs)-total(want.runs), want.maxStep; extra > step {
						t.Fatalf("seed %d on %s, write %d of %d failing: %d node runs more than the uninterrupted run, more than its largest step's %d; graph:\n%s", seed, name, failAt, cp.writes, extra, step, g)
					}
				}
			}
		})
	}
}
