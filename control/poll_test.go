package control_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/tasks"
	"github.com/statgraph/statgraph/verifier"
)

// countingStore is a run store that counts the threads read from it.
type countingStore struct {
	statgraph.Checkpointer
	mu    sync.Mutex
	reads map[string]int
}

func (s *countingStore) note(thread string) {
	s.mu.Lock()
	s.reads[thread]++
	s.mu.Unlock()
}

func (s *countingStore) Get(ctx context.Context, thread string, id int64) (*statgraph.Checkpoint, error) {
	s.note(thread)
	return s.Checkpointer.Get(ctx, thread, id)
}

func (s *countingStore) Range(ctx context.Context, thread string, from, to int64, limit int) ([]*statgraph.Checkpoint, error) {
	s.note(thread)
	return s.Checkpointer.Range(ctx, thread, from, to, limit)
}

// threads returns the threads read since the last call and resets the
// count.
func (s *countingStore) threads() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]bool{}
	for th := range s.reads {
		out[th] = true
	}
	clear(s.reads)
	return out
}

// pollPlan writes a plan of n independent tasks, those in running marked
// in progress and those in done marked done, and returns its file.
func pollPlan(t testing.TB, n int, running, done []int) string {
	t.Helper()
	status := map[int]string{}
	for _, i := range running {
		status[i] = tasks.StatusInProgress
	}
	for _, i := range done {
		status[i] = tasks.StatusDone
	}
	var list []map[string]any
	for i := 1; i <= n; i++ {
		tk := map[string]any{"id": i, "title": fmt.Sprintf("task %d", i), "test_cmd": "true"}
		if s := status[i]; s != "" {
			tk["status"] = s
		}
		list = append(list, tk)
	}
	b, err := json.Marshal(map[string]any{"tasks": list})
	require.NoError(t, err)
	t.Setenv("STATGRAPH_HOME", t.TempDir())
	file := filepath.Join(t.TempDir(), "tasks.json")
	require.NoError(t, os.WriteFile(file, b, 0o644))
	// Written a while ago, as a plan nobody is changing.
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(file, old, old))
	return file
}

// openPolled opens file's plan on a counting SQLite store in which each
// unit of stored has a finished run that spent 42 tokens.
func openPolled(t testing.TB, file string, stored ...int) (*control.Control, *countingStore) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "runs.db"))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	pass := agents.VerifierFunc(func(context.Context, agents.TaskState) (verifier.Verification, error) {
		return verifier.Verification{TestsPassed: true, LintPassed: true}, nil
	})
	spend := agents.ExecutorFunc(func(context.Context, agents.TaskState) (string, error) { return "did it", nil })
	g, err := agents.NewGraph(agents.Config{Executor: spend, Verifier: pass}, statgraph.WithCheckpointer(st))
	require.NoError(t, err)
	plan, _, err := control.Paths(file, "", "", "")
	require.NoError(t, err)
	for _, i := range stored {
		id := fmt.Sprint(i)
		_, err := g.Invoke(context.Background(), agents.TaskState{Task: agents.Task{ID: id, Title: "t"}, Tokens: 42}, statgraph.WithThread(plan.Thread(id)))
		require.NoError(t, err)
	}
	cs := &countingStore{Checkpointer: st, reads: map[string]int{}}
	c, err := control.Open(control.Options{File: file, Checkpointer: cs})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c, cs
}

// A poll reads the run store only for units in progress and units whose
// status changed since the last poll; what it shows of the others is what
// their last read gave.
func TestPollReadsOnlyUnitsThatMayHaveChanged(t *testing.T) {
	file := pollPlan(t, 30, []int{1, 2}, []int{3})
	c, cs := openPolled(t, file, 1, 3)
	plan := c.Plan()

	first, err := c.Tasks(bg)
	require.NoError(t, err)
	require.Len(t, cs.threads(), 30, "the first call reads every unit once")
	require.Equal(t, agents.PhaseDone, first[2].Phase)
	require.Equal(t, 42, first[2].Tokens)

	again, err := c.Tasks(bg)
	require.NoError(t, err)
	require.Equal(t, map[string]bool{plan.Thread("1"): true, plan.Thread("2"): true}, cs.threads(),
		"a poll reads only the units in progress")
	require.Equal(t, first, again, "the others show what their last read gave")

	// Task 5's status changes in the file (a run elsewhere, or an edit):
	// it is read again, once.
	f, err := tasks.Load(file, "")
	require.NoError(t, err)
	require.NoError(t, f.SetStatus("5", tasks.StatusFailed, "broke"))
	require.NoError(t, f.Save())
	_, err = c.Tasks(bg)
	require.NoError(t, err)
	require.Equal(t, map[string]bool{plan.Thread("1"): true, plan.Thread("2"): true, plan.Thread("5"): true}, cs.threads())
	_, err = c.Tasks(bg)
	require.NoError(t, err)
	require.Len(t, cs.threads(), 2)
}
