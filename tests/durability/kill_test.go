// Package durability checks that a run survives its process being killed:
// a child process (this test binary, re-executed) runs a multi-step graph on
// a SQLite checkpoint file and is sent SIGKILL at chosen points; a second
// child resumes the thread, and the final state and the nodes' side effects
// must be those of a run that was never interrupted.
package durability

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
)

type state struct {
	Log []string `json:"log"`
	Sum int      `json:"sum"`
}

// effect appends a line to the side-effect log, synced, as a node's visible
// work outside the graph.
func effect(path, line string) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		panic(err)
	}
	fmt.Fprintln(f, line)
	f.Sync()
	f.Close()
}

// hold marks that the child reached its pause point and waits to be killed.
func hold(marker string) {
	os.WriteFile(marker, []byte("here"), 0o644)
	time.Sleep(time.Hour)
}

// build is the graph: a -> b -> (c1 | c2) -> d -> e. Each node records
// "start" and "done" lines; pause "mid:<node>" holds between them.
func build(log, pause, marker string) *statgraph.Builder[state] {
	node := func(name string, add int) func(context.Context, state) (state, error) {
		return func(_ context.Context, s state) (state, error) {
			effect(log, "start "+name)
			if pause == "mid:"+name {
				hold(marker)
			}
			effect(log, "done "+name)
			return state{Log: []string{name}, Sum: add}, nil
		}
	}
	b := statgraph.New[state]().SetReducer(func(cur, upd state) state {
		cur.Log = statgraph.Append(cur.Log, upd.Log)
		cur.Sum += upd.Sum
		return cur
	})
	for i, name := range []string{"a", "b", "c1", "c2", "d", "e"} {
		b.AddNode(name, node(name, 1<<i))
	}
	return b.AddEdge(statgraph.Start, "a").AddEdge("a", "b").AddEdge("b", "c1").AddEdge("b", "c2").
		AddEdge("c1", "d").AddEdge("c2", "d").AddEdge("d", "e").AddEdge("e", statgraph.End)
}

// TestChild is the child process's body; it does nothing in a normal run.
func TestChild(t *testing.T) {
	if os.Getenv("DURABILITY_CHILD") == "" {
		return
	}
	db, log, pause, marker, out := os.Getenv("DB"), os.Getenv("LOG"), os.Getenv("PAUSE"), os.Getenv("MARKER"), os.Getenv("OUT")
	ctx := context.Background()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g, err := build(log, pause, marker).Compile(statgraph.WithCheckpointer(st))
	if err != nil {
		t.Fatal(err)
	}
	var final state
	var runErr error
	// A thread whose run already finished (killed after its last checkpoint)
	// is done: invoking it again would start a new run.
	if snap, err := g.State(ctx, "kill"); err == nil && len(snap.Next) == 0 && snap.Step > 0 {
		writeOut(t, out, snap.State)
		return
	}
	for ev, err := range g.Stream(ctx, state{}, statgraph.WithThread("kill")) {
		switch {
		case ev.Kind == statgraph.EventNodeStart && pause == "before:"+ev.Node:
			hold(marker)
		case ev.Kind == statgraph.EventCheckpoint && strings.HasPrefix(pause, "after-ckpt:"):
			if s, err := g.State(ctx, "kill"); err == nil && len(s.State.Log) > 0 && s.State.Log[len(s.State.Log)-1] == strings.TrimPrefix(pause, "after-ckpt:") {
				hold(marker)
			}
		case ev.Kind == statgraph.EventRunEnd:
			final, runErr = ev.State, err
		}
	}
	if runErr != nil {
		t.Fatal(runErr)
	}
	writeOut(t, out, final)
}

func writeOut(t *testing.T, path string, s state) {
	b, _ := json.Marshal(s)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

type child struct {
	dir, pause string
}

// start runs the child; with a pause it returns once the child holds there.
func (c child) run(t *testing.T, pause string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "DURABILITY_CHILD=1",
		"DB="+filepath.Join(c.dir, "runs.db"), "LOG="+filepath.Join(c.dir, "effects.log"),
		"PAUSE="+pause, "MARKER="+filepath.Join(c.dir, "marker"), "OUT="+filepath.Join(c.dir, "out.json"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	require.NoError(t, cmd.Start())
	return cmd
}

func (c child) finish(t *testing.T) state {
	cmd := c.run(t, "")
	require.NoError(t, cmd.Wait())
	var s state
	b, err := os.ReadFile(filepath.Join(c.dir, "out.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &s))
	return s
}

func (c child) effects(t *testing.T) map[string]int {
	b, err := os.ReadFile(filepath.Join(c.dir, "effects.log"))
	require.NoError(t, err)
	counts := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		counts[l]++
	}
	return counts
}

func TestKillAndResume(t *testing.T) {
	clean := child{dir: t.TempDir()}
	want := clean.finish(t)
	require.Equal(t, []string{"a", "b", "c1", "c2", "d", "e"}, want.Log)
	require.Equal(t, 63, want.Sum)

	for _, tc := range []struct {
		pause string
		rerun string // the node that was running at the kill and starts twice
	}{
		{"before:b", ""},
		{"mid:d", "d"},
		{"after-ckpt:b", ""},
		{"after-ckpt:e", ""},
		{"mid:a", "a"},
	} {
		t.Run(tc.pause, func(t *testing.T) {
			t.Parallel()
			c := child{dir: t.TempDir()}
			cmd := c.run(t, tc.pause)
			marker := filepath.Join(c.dir, "marker")
			deadline := time.Now().Add(60 * time.Second)
			for {
				if _, err := os.Stat(marker); err == nil {
					break
				}
				require.True(t, time.Now().Before(deadline), "child never reached %s", tc.pause)
				time.Sleep(5 * time.Millisecond)
			}
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			_ = cmd.Wait()
			os.Remove(marker)

			got := c.finish(t)
			require.Equal(t, want, got, "the resumed run must end as an uninterrupted one")
			counts := c.effects(t)
			for _, name := range want.Log {
				require.Equal(t, 1, counts["done "+name], "node %s completed %d times", name, counts["done "+name])
				starts := 1
				if name == tc.rerun {
					starts = 2
				}
				require.Equal(t, starts, counts["start "+name], "node %s started %d times", name, counts["start "+name])
			}
		})
	}
}
