package sqlite

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/statgraph/statgraph/statgraph"
)

type killParent struct{ Log []string }
type killChild struct{ Steps []string }

// killGraph is before -> sub -> after, sub being prepare -> work -> finish.
// Every node run is appended to the file runs; work calls block first.
func killGraph(t *testing.T, store statgraph.Checkpointer, runs string, block func()) *statgraph.Graph[killParent] {
	t.Helper()
	record := func(name string) {
		f, err := os.OpenFile(runs, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(name + "\n")
		f.Close()
	}
	childStep := func(name string) func(context.Context, killChild) (killChild, error) {
		return func(_ context.Context, s killChild) (killChild, error) {
			record(name)
			if name == "work" && block != nil {
				block()
			}
			s.Steps = append(slices.Clip(s.Steps), name)
			return s, nil
		}
	}
	child, err := statgraph.New[killChild]().
		AddNode("prepare", childStep("prepare")).AddNode("work", childStep("work")).AddNode("finish", childStep("finish")).
		AddEdge(statgraph.Start, "prepare").AddEdge("prepare", "work").AddEdge("work", "finish").AddEdge("finish", statgraph.End).
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	step := func(name string) func(context.Context, killParent) (killParent, error) {
		return func(_ context.Context, s killParent) (killParent, error) {
			record(name)
			s.Log = append(slices.Clip(s.Log), name)
			return s, nil
		}
	}
	b := statgraph.New[killParent]().
		AddNode("before", step("before")).AddNode("after", step("after")).
		AddEdge(statgraph.Start, "before").AddEdge("before", "sub").AddEdge("sub", "after").AddEdge("after", statgraph.End)
	statgraph.AddSubgraph(b, "sub", child, func(killParent) killChild { return killChild{} },
		func(p killParent, c killChild) killParent {
			p.Log = append(slices.Clip(p.Log), "sub:"+strings.Join(c.Steps, ","))
			return p
		})
	g, err := b.Compile(statgraph.WithCheckpointer(store))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestSubgraphKillHelper is the process that TestSubgraphKilledAndResumed
// kills: it runs the graph until the child's work node blocks.
func TestSubgraphKillHelper(t *testing.T) {
	dir := os.Getenv("STATGRAPH_SUBGRAPH_KILL_DIR")
	if dir == "" {
		t.Skip("helper process of TestSubgraphKilledAndResumed; runs only when that test starts it")
	}
	store, err := Open(context.Background(), filepath.Join(dir, "cp.db"))
	if err != nil {
		t.Fatal(err)
	}
	g := killGraph(t, store, filepath.Join(dir, "runs"), func() {
		os.WriteFile(filepath.Join(dir, "blocked"), nil, 0o644)
		select {} // until killed
	})
	g.Invoke(context.Background(), killParent{}, statgraph.WithThread("t"))
	t.Fatal("the run ended; it should have been killed inside the subgraph")
}

// Mirrors LangGraph's test_checkpoint_recovery (test_pregel.py) with a
// subgraph and a real crash: a process is killed with SIGKILL while a node
// of the subgraph runs; a new process continues the parent's thread from
// the SQLite file, and only the interrupted node and what follows it run
// again, the child's completed node included.
func TestSubgraphKilledAndResumed(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSubgraphKillHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "STATGRAPH_SUBGRAPH_KILL_DIR="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "blocked")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("the helper process never reached the subgraph's work node")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	cmd.Wait()

	store, err := Open(context.Background(), filepath.Join(dir, "cp.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	runs := filepath.Join(dir, "runs")
	g := killGraph(t, store, runs, nil)
	s, err := g.Invoke(context.Background(), killParent{}, statgraph.WithThread("t"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Log, []string{"before", "sub:prepare,work,finish", "after"}) {
		t.Fatalf("final state %v", s.Log)
	}
	b, err := os.ReadFile(runs)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(b))
	want := []string{"before", "prepare", "work", "work", "finish", "after"}
	if !slices.Equal(got, want) {
		t.Fatalf("node runs across the two processes = %v, want %v (only work, killed, runs twice)", got, want)
	}
}
