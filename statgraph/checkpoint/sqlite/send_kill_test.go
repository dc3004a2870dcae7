package sqlite

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/statgraph/statgraph/statgraph"
)

// sendKillItems is the number of Send tasks; the helper blocks the tasks
// of items sendKillDone and above.
const sendKillItems, sendKillDone = 8, 5

type sendKillState struct {
	Item int
	Done []int
}

// sendKillGraph is split -> one Send to work per item -> End. Every work
// run is appended to the file runs; block(item) reports whether it blocks.
func sendKillGraph(t *testing.T, store statgraph.Checkpointer, runs string, block func(int) bool) *statgraph.Graph[sendKillState] {
	t.Helper()
	g, err := statgraph.New[sendKillState]().
		SetReducer(func(s, u sendKillState) sendKillState {
			s.Done = append(slices.Clip(s.Done), u.Done...)
			return s
		}).
		AddNode("split", func(context.Context, sendKillState) (sendKillState, error) { return sendKillState{}, nil }).
		AddSends("split", func(context.Context, sendKillState) []statgraph.Send[sendKillState] {
			out := make([]statgraph.Send[sendKillState], sendKillItems)
			for i := range out {
				out[i] = statgraph.Send[sendKillState]{To: "work", Input: sendKillState{Item: i}}
			}
			return out
		}, "work").
		AddNode("work", func(_ context.Context, s sendKillState) (sendKillState, error) {
			f, err := os.OpenFile(runs, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return s, err
			}
			f.WriteString("work:" + strconv.Itoa(s.Item) + "\n")
			f.Close()
			if block != nil && block(s.Item) {
				select {} // until killed
			}
			return sendKillState{Done: []int{s.Item}}, nil
		}).
		AddEdge(statgraph.Start, "split").AddEdge("work", statgraph.End).
		Compile(statgraph.WithCheckpointer(store))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestSendKillHelper is the process that TestSendKilledMidStepAndResumed
// kills: its Send tasks of the last items block, the others finish.
func TestSendKillHelper(t *testing.T) {
	dir := os.Getenv("STATGRAPH_SEND_KILL_DIR")
	if dir == "" {
		t.Skip("helper process of TestSendKilledMidStepAndResumed; runs only when that test starts it")
	}
	store, err := Open(context.Background(), filepath.Join(dir, "cp.db"))
	if err != nil {
		t.Fatal(err)
	}
	g := sendKillGraph(t, store, filepath.Join(dir, "runs"), func(item int) bool { return item >= sendKillDone })
	g.Invoke(context.Background(), sendKillState{}, statgraph.WithThread("t"))
	t.Fatal("the run ended; it should have been killed in the Send step")
}

// Mirrors LangGraph's put_writes recovery: a process is killed with
// SIGKILL in the middle of a step of Send tasks, once the finished tasks'
// updates are in the SQLite file; a new process resumes the thread and
// runs only the unfinished tasks.
func TestSendKilledMidStepAndResumed(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSendKillHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "STATGRAPH_SEND_KILL_DIR="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	// Wait until the updates of the tasks that do not block are in the
	// file (the step's checkpoint holds one "__sent__:" entry per finished
	// Send task).
	runs := filepath.Join(dir, "runs")
	store, err := Open(context.Background(), filepath.Join(dir, "cp.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if sent(store) == sendKillDone {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(runs)
			t.Fatalf("the helper process never stored the updates of %d Send tasks; it ran %q", sendKillDone, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	cmd.Wait()

	g := sendKillGraph(t, store, runs, nil)
	s, err := g.Invoke(context.Background(), sendKillState{}, statgraph.WithThread("t"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 1, 2, 3, 4, 5, 6, 7}; !slices.Equal(s.Done, want) {
		t.Fatalf("final Done = %v, want %v (every item once, in Send order)", s.Done, want)
	}
	b, err := os.ReadFile(runs)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(b))
	counts := map[string]int{}
	for _, r := range got {
		counts[r]++
	}
	for i := range sendKillItems {
		want := 1
		if i >= sendKillDone {
			want = 2 // killed while running: runs again
		}
		if name := "work:" + strconv.Itoa(i); counts[name] != want {
			t.Errorf("%s ran %d times across the two processes, want %d (all runs: %v)", name, counts[name], want, got)
		}
	}
}

// sent counts the stored updates of Send tasks in thread t's latest
// checkpoint.
func sent(store *Store) int {
	c, err := store.Get(context.Background(), "t", 0)
	if err != nil {
		return 0 // not written yet
	}
	n := 0
	for _, pw := range c.Pending {
		if strings.HasPrefix(pw.Node, "__sent__:") {
			n++
		}
	}
	return n
}
