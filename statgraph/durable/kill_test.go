package durable_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/statgraph/durable"
)

// killFlow is s1 -> s2 -> p0..p3 in parallel -> s3, each task appending
// its name to the file runs as it starts; block(name) makes a task wait
// until the process is killed.
func killFlow(t *testing.T, db, runs string, block func(string) bool) (*durable.Workflow[int, string], *sqlite.Store) {
	t.Helper()
	store, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	step := durable.NewTask("step", func(_ context.Context, name string) (string, error) {
		f, err := os.OpenFile(runs, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return "", err
		}
		fmt.Fprintln(f, name)
		f.Close()
		if block != nil && block(name) {
			select {} // until killed
		}
		return strings.ToUpper(name), nil
	})
	w, err := durable.New("kill", store, func(ctx context.Context, n int) (string, error) {
		var out []string
		for _, s := range []string{"s1", "s2"} {
			v, err := step.Do(ctx, s)
			if err != nil {
				return "", err
			}
			out = append(out, v)
		}
		var fs []*durable.Future[string]
		for i := range n {
			fs = append(fs, step.Call(ctx, fmt.Sprintf("p%d", i)))
		}
		for _, f := range fs {
			v, err := f.Get(ctx)
			if err != nil {
				return "", err
			}
			out = append(out, v)
		}
		v, err := step.Do(ctx, "s3")
		return strings.Join(append(out, v), " "), err
	})
	if err != nil {
		t.Fatal(err)
	}
	return w, store
}

// TestKillHelper is the process TestKilledMidTaskAndResumed kills: tasks
// p2 and p3 block, the others finish.
func TestKillHelper(t *testing.T) {
	dir := os.Getenv("STATGRAPH_DURABLE_KILL_DIR")
	if dir == "" {
		t.Skip("helper process of TestKilledMidTaskAndResumed; runs only when that test starts it")
	}
	w, _ := killFlow(t, filepath.Join(dir, "cp.db"), filepath.Join(dir, "runs"), func(name string) bool { return name == "p2" || name == "p3" })
	w.Invoke(context.Background(), "t", 4)
	t.Fatal("the run ended; it should have been killed in tasks p2 and p3")
}

// TestKilledMidTaskAndResumed: a process running a workflow is killed with
// SIGKILL while two of four parallel tasks run, after the two others and
// two earlier tasks finished; a new process runs the thread again and
// only the two killed tasks and the ones after them run: the finished ones
// replay from the SQLite file.
func TestKilledMidTaskAndResumed(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "STATGRAPH_DURABLE_KILL_DIR="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	db, runs := filepath.Join(dir, "cp.db"), filepath.Join(dir, "runs")
	w, store := killFlow(t, db, runs, nil)
	// Wait until s1, s2, p0 and p1 are recorded and p2 and p3 started.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		b, _ := os.ReadFile(runs)
		started := strings.Fields(string(b))
		if recorded(w, store) == 4 && len(started) == 6 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the helper never reached the blocking tasks; it ran %q, %d recorded", started, recorded(w, store))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	cmd.Wait()

	out, err := w.Invoke(context.Background(), "t", 4)
	if err != nil {
		t.Fatal(err)
	}
	if want := "S1 S2 P0 P1 P2 P3 S3"; out != want {
		t.Errorf("output %q; want %q", out, want)
	}
	b, err := os.ReadFile(runs)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, name := range strings.Fields(string(b)) {
		counts[name]++
	}
	want := map[string]int{"s1": 1, "s2": 1, "p0": 1, "p1": 1, "p2": 2, "p3": 2, "s3": 1}
	for name, n := range want {
		if counts[name] != n {
			t.Errorf("task %s ran %d times across the two processes; want %d (all: %v)", name, counts[name], n, counts)
		}
	}
}

// recorded returns how many task calls of thread "t"'s run are recorded,
// 0 before the run saved its input.
func recorded(w *durable.Workflow[int, string], store *sqlite.Store) int {
	snap, err := w.Graph().State(context.Background(), "t")
	if err != nil || snap.State.Run == "" {
		return 0
	}
	c, err := store.Get(context.Background(), snap.State.Run, 1)
	if err != nil {
		return 0
	}
	return len(c.Pending)
}
