package dispatch_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/tasks"
)

// A run cancelled while a unit is starting (its workspace being prepared)
// leaves the unit interrupted, to continue on the next run, not failed:
// the cancel comes from the Report hook at the unit's start event, just
// before the workspace is prepared.
func TestCancelWhileUnitStartsLeavesItInterrupted(t *testing.T) {
	dir := t.TempDir()
	gitRepo(t, dir, map[string]string{"tasks.json": `{"tasks": [{"id": 1, "title": "t",
  "test_cmd": "true", "executor": {"command": ["true"]}}]}`})
	path := filepath.Join(dir, "tasks.json")
	f, err := tasks.Load(path, "")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "runs.db"))
	require.NoError(t, err)
	defer st.Close()
	d := &dispatch.Dispatcher{File: f, Checkpointer: st, Jobs: 1, NoSandbox: true, Report: func(e dispatch.Event) {
		if e.Kind == dispatch.EventStart {
			cancel()
		}
	}}
	sum, _ := d.Run(ctx)
	require.Len(t, sum.Units, 1)
	require.Equal(t, tasks.StatusInterrupted, sum.Units[0].Status, "%+v", sum.Units[0])
	task, _ := f.Task("1")
	require.Nil(t, task.FailedAt)
}
