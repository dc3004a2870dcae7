package postgres

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// killState is the state of the graph TestResumeAfterKill runs.
type killState struct{ Log []string }

// killGraph is a -> b -> c on store. Each node appends its name to the file
// runs when it starts, so runs counts executions across processes; b,
// while hang is set, then waits to be killed.
func killGraph(store statgraph.Checkpointer, runs string, hang bool) (*statgraph.Graph[killState], error) {
	node := func(name string) func(context.Context, killState) (killState, error) {
		return func(ctx context.Context, s killState) (killState, error) {
			f, err := os.OpenFile(runs, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err != nil {
				return s, err
			}
			_, err = f.WriteString(name + "\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return s, err
			}
			if name == "b" && hang {
				<-ctx.Done() // the parent kills the process first
				return s, ctx.Err()
			}
			s.Log = append(s.Log, name)
			return s, nil
		}
	}
	return statgraph.New[killState]().AddNode("a", node("a")).AddNode("b", node("b")).AddNode("c", node("c")).
		AddEdge(statgraph.Start, "a").AddEdge("a", "b").AddEdge("b", "c").AddEdge("c", statgraph.End).
		Compile(statgraph.WithCheckpointer(store))
}

// TestResumeAfterKill runs a graph in another process on a Postgres store,
// kills that process with SIGKILL while node b runs, and resumes the
// thread here with a store of its own: a is not run again, b is, and the
// run ends as one that was never interrupted.
func TestResumeAfterKill(t *testing.T) {
	_, conn, schema := openTest(t)
	runs := filepath.Join(t.TempDir(), "runs")
	cmd := exec.Command(os.Args[0], "-test.run=^TestResumeAfterKill$")
	cmd.Env = append(os.Environ(), "STATGRAPH_PG_KILL_HELPER=1", "KILL_HELPER_CONN="+conn,
		"KILL_HELPER_SCHEMA="+schema, "KILL_HELPER_RUNS="+runs)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	require.NoError(t, cmd.Start())
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(readFile(runs), "b\n") {
		require.True(t, time.Now().Before(deadline), "the helper did not reach node b within 60 s; runs: %q", readFile(runs))
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	err := cmd.Wait()
	var exitErr *exec.ExitError
	require.ErrorAs(t, err, &exitErr)
	assert.Equal(t, syscall.SIGKILL, exitErr.Sys().(syscall.WaitStatus).Signal())

	store, err := Open(t.Context(), conn, Schema(schema))
	require.NoError(t, err)
	defer store.Close()
	g, err := killGraph(store, runs, false)
	require.NoError(t, err)
	out, err := g.Invoke(t.Context(), killState{}, statgraph.WithThread("killed"))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, out.Log)
	assert.Equal(t, "a\nb\nb\nc\n", readFile(runs), "a ran once, b again after the kill, c once")
}

// killHelper is the killed process of TestResumeAfterKill: it runs the
// graph until node b, where it waits for SIGKILL. Errors end it with
// status 2, which the parent reports as a helper that never reached b.
func killHelper() {
	ctx := context.Background()
	store, err := Open(ctx, os.Getenv("KILL_HELPER_CONN"), Schema(os.Getenv("KILL_HELPER_SCHEMA")))
	if err == nil {
		var g *statgraph.Graph[killState]
		if g, err = killGraph(store, os.Getenv("KILL_HELPER_RUNS"), true); err == nil {
			_, err = g.Invoke(ctx, killState{}, statgraph.WithThread("killed"))
		}
	}
	fmt.Fprintln(os.Stderr, "kill helper:", err)
	os.Exit(2)
}

func readFile(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// TestMain runs the helper process of TestResumeAfterKill in place of the
// tests when asked to.
func TestMain(m *testing.M) {
	if os.Getenv("STATGRAPH_PG_KILL_HELPER") == "1" {
		killHelper()
	}
	os.Exit(m.Run())
}
