package dispatch

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/tasks"
)

// TestLandOrder: land takes done units each after its dependencies and
// otherwise in the order they finished (their thread's last checkpoint),
// whatever the file order; units not done are left out, and a unit with no
// thread (done before statgraph) goes first.
func TestLandOrder(t *testing.T) {
	dir := t.TempDir()
	f, err := tasks.Parse(filepath.Join(dir, "tasks.json"), []byte(`{"tasks": [
  {"id": 1, "title": "a", "status": "done"},
  {"id": 2, "title": "b", "status": "done"},
  {"id": 3, "title": "c", "status": "done", "dependencies": [4]},
  {"id": 4, "title": "d", "status": "done"},
  {"id": 5, "title": "e", "status": "pending"},
  {"id": 6, "title": "f", "status": "done"}]}`), "")
	require.NoError(t, err)
	cp := statgraph.NewMemoryCheckpointer(true)
	d := &Dispatcher{File: f, Repo: dir, StateDir: t.TempDir(), Checkpointer: cp}
	plan, err := d.plan()
	require.NoError(t, err)
	t0 := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	ctx := context.Background()
	// Finished: 3 first, then 2, 1 and 4 last; 6 has no thread.
	for i, id := range []string{"3", "2", "1", "4"} {
		require.NoError(t, cp.Put(ctx, &statgraph.Checkpoint{Thread: plan.Thread(id), ID: 1, Created: t0.Add(time.Duration(i) * time.Minute)}))
	}
	got, err := d.landOrder(ctx, plan)
	require.NoError(t, err)
	assert.Equal(t, []string{"6", "2", "1", "4", "3"}, got, "3 finished first but waits for 4, its dependency")
}
