package checkpointtest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/statgraph/statgraph/statgraph"
)

// KillStore is a store that two processes open at the same place: New
// returns a fresh place (a file path, a connection string with a schema),
// removed when t ends; Open opens the store there, in either process.
type KillStore struct {
	New  func(t *testing.T) string
	Open func(ctx context.Context, place string) (statgraph.Checkpointer, error)
}

// The environment of the killed process.
const (
	killPlace = "STATGRAPH_KILL_PLACE"
	killRuns  = "STATGRAPH_KILL_RUNS"
	killMode  = "STATGRAPH_KILL_MODE"
)

var modes = map[string]statgraph.Durability{
	"sync": statgraph.DurabilitySync, "async": statgraph.DurabilityAsync, "exit": statgraph.DurabilityExit,
}

// killGraph is a -> x, y, z (one parallel step) -> End. Every node body
// appends its name to the file runs as it starts; z, while hang is set,
// then waits to be killed.
func killGraph(store statgraph.Checkpointer, runs string, hang bool) (*statgraph.Graph[st], error) {
	node := func(name string) func(context.Context, st) (st, error) {
		return func(ctx context.Context, _ st) (st, error) {
			f, err := os.OpenFile(runs, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err != nil {
				return st{}, err
			}
			_, err = f.WriteString(name + "\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return st{}, err
			}
			if name == "z" && hang {
				<-ctx.Done() // killed first
				return st{}, ctx.Err()
			}
			return st{Log: []string{name}}, nil
		}
	}
	b := statgraph.New[st]().SetReducer(appendReducer).AddEdge(statgraph.Start, "a")
	for _, n := range []string{"a", "x", "y", "z"} {
		b.AddNode(n, node(n))
	}
	for _, n := range []string{"x", "y", "z"} {
		b.AddEdge("a", n).AddEdge(n, statgraph.End)
	}
	return b.Compile(statgraph.WithCheckpointer(store))
}

// KillHelper is the body of the test that RunDurabilityKill and
// RunFeatureKill start in another process: it runs the graph they name
// until it is killed. Outside that process it skips.
func KillHelper(t *testing.T, ks KillStore) {
	place := os.Getenv(killPlace)
	if place == "" {
		t.Skip("helper process of a durability kill test; runs only when that test starts it")
	}
	ctx := context.Background()
	store, err := ks.Open(ctx, place)
	if err != nil {
		t.Fatal(err)
	}
	if name := os.Getenv(killCaseEnv); name != "" {
		helperKillCase(t, store, name) // killcases.go
	}
	g, err := killGraph(store, os.Getenv(killRuns), true)
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Invoke(ctx, st{}, statgraph.WithThread("killed"), statgraph.WithDurability(modes[os.Getenv(killMode)]))
	t.Fatalf("the run ended (%v); it should have been killed while z ran", err)
}

// RunDurabilityKill is the crash test of each durability mode with real
// processes (LangGraph's durability="sync" | "async" | "exit" and its
// put_writes recovery): for each mode it runs a -> {x, y, z} in the test
// binary's test helperTest (which calls KillHelper), kills that process
// with SIGKILL while z runs once x and y have finished (under sync and
// async: once their updates are stored), resumes the thread here on a
// store of its own, and counts how often each node body ran across both
// processes:
//   - sync and async: a, x and y once, z twice (only the unfinished task
//     runs again);
//   - exit: every node twice (nothing was stored but the input).
//
// It then does the same on a chain a -> b -> c -> d killed while c runs,
// whose store is slow to write the checkpoint after b, where the modes
// differ as documented: sync loses only c (c and d run again), async also
// loses b, whose write was in flight (b, c and d run again), exit loses
// everything (see durabilityChainCases).
func RunDurabilityKill(t *testing.T, helperTest string, ks KillStore) {
	for _, tc := range []struct {
		mode string
		want string // runs across both processes, sorted
	}{
		{"sync", "a x y z z"},
		{"async", "a x y z z"},
		{"exit", "a a x x y y z z"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			place := ks.New(t)
			runs := filepath.Join(t.TempDir(), "runs")
			ctx := context.Background()
			store, err := ks.Open(ctx, place)
			if err != nil {
				t.Fatal(err)
			}
			defer closeStore(store)
			killAt(t, helperTest, []string{killPlace + "=" + place, killRuns + "=" + runs, killMode + "=" + tc.mode}, runs,
				func() bool { return killPoint(ctx, store, runs, tc.mode) },
				"x and y finished"+map[bool]string{true: " and stored", false: ""}[tc.mode != "exit"]+", z running")

			g, err := killGraph(store, runs, false)
			if err != nil {
				t.Fatal(err)
			}
			out, err := g.Invoke(ctx, st{}, statgraph.WithThread("killed"), statgraph.WithDurability(modes[tc.mode]))
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"a", "x", "y", "z"}; !slices.Equal(out.Log, want) {
				t.Errorf("final log %q; want %q", out.Log, want)
			}
			got := strings.Fields(readRuns(runs))
			slices.Sort(got)
			if strings.Join(got, " ") != tc.want {
				t.Errorf("node bodies run across both processes: %q; want %q", strings.Join(got, " "), tc.want)
			}
		})
	}
	runDurabilityChainKill(t, helperTest, ks)
}

// killPoint reports whether the helper may be killed: z is running and x
// and y have run, and, when the mode stores updates, both are stored.
func killPoint(ctx context.Context, store statgraph.Checkpointer, runs, mode string) bool {
	r := readRuns(runs)
	if !strings.Contains(r, "x\n") || !strings.Contains(r, "y\n") || !strings.Contains(r, "z\n") {
		return false
	}
	if mode == "exit" {
		return true
	}
	c, err := store.Get(ctx, "killed", 0)
	return err == nil && len(c.Pending) >= 2
}

// closeStore closes store if it can be closed.
func closeStore(store statgraph.Checkpointer) {
	switch c := store.(type) {
	case interface{ Close() error }:
		c.Close()
	case interface{ Close() }:
		c.Close()
	}
}

func readRuns(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
