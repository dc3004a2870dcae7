package dispatch_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/tasks"
)

// A run whose budget is spent starts no unit: each unit that would run
// stays pending with the reason (an EventHeld each, the one waiting for
// another too), nothing runs, and the run reports it stopped early.
func TestDispatcherSpentBudgetStartsNothing(t *testing.T) {
	dir := t.TempDir()
	gitRepo(t, dir, map[string]string{
		"agent.sh": "#!/bin/sh\ntouch ran-$1\n",
		"tasks.json": `{"tasks": [
  {"id": 1, "title": "one", "executor": {"command": ["./agent.sh", "1"]}, "test_cmd": "true"},
  {"id": 2, "title": "two", "executor": {"command": ["./agent.sh", "2"]}, "test_cmd": "true"},
  {"id": 3, "title": "three", "dependencies": [1], "executor": {"command": ["./agent.sh", "3"]}, "test_cmd": "true"}]}`,
	})
	path := filepath.Join(dir, "tasks.json")
	f, err := tasks.Load(path, "")
	require.NoError(t, err)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "runs.db"))
	require.NoError(t, err)
	defer st.Close()
	budget := llm.NewRunBudget(llm.Limit{Tokens: 100}, nil)
	budget.Add(llm.Usage{Total: 120})
	var mu sync.Mutex
	var held []string
	d := &dispatch.Dispatcher{File: f, Checkpointer: st, Budget: budget, NoSandbox: true, Report: func(e dispatch.Event) {
		mu.Lock()
		defer mu.Unlock()
		if e.Kind == dispatch.EventHeld {
			held = append(held, e.Unit)
		}
	}}
	sum, err := d.Run(ctx)
	require.NoError(t, err)
	assert.True(t, sum.Failed(), "a run its budget stopped early ends as not finished")
	assert.ElementsMatch(t, []string{"1", "2", "3"}, held)
	for _, u := range sum.Units {
		assert.Equal(t, tasks.StatusPending, u.Status, u.ID)
		assert.Contains(t, u.Reason, "not started: ", u.ID)
		assert.Contains(t, u.Reason, "global budget of 100 tokens spent (120 used)", u.ID)
	}
	for _, n := range []string{"ran-1", "ran-2", "ran-3"} {
		_, err := os.Stat(filepath.Join(dir, n))
		assert.ErrorIs(t, err, os.ErrNotExist, "%s: no agent started", n)
	}
	g, err := tasks.Load(path, "")
	require.NoError(t, err)
	one, _ := g.Task("1")
	assert.Equal(t, tasks.StatusPending, one.Status)
	assert.Contains(t, one.StatusReason, "global budget of 100 tokens spent")
}
