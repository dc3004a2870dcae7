package dispatch_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/tasks"
)

// TestProgressNamesTheRunningNode: progress events name the node that is
// running, not the one that just finished. The task's tests wait until the
// dispatcher has reported the "verify" phase, which it can only do when the
// verifier starts; before, it reported a phase after the node had ended, so
// the tests waited in vain (and the unit failed).
func TestProgressNamesTheRunningNode(t *testing.T) {
	dir := t.TempDir()
	signal := filepath.Join(t.TempDir(), "verify-reported")
	gitRepo(t, dir, map[string]string{
		"tasks.json": `{"tasks": [{"id": 1, "title": "phases", "max_retries": 1,
  "test_cmd": "i=0; while [ ! -f '` + signal + `' ]; do i=$((i+1)); [ $i -gt 100 ] && exit 1; sleep 0.05; done",
  "executor": {"command": ["sh", "-c", "echo done > out.txt"]}}]}`,
	})
	f, err := tasks.Load(filepath.Join(dir, "tasks.json"), "")
	require.NoError(t, err)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "runs.db"))
	require.NoError(t, err)
	defer st.Close()
	var mu sync.Mutex
	var phases []string
	// NoSandbox: the tests poll for signal, outside the workspace, in a
	// /tmp the sandbox replaces with an empty one, so sandboxed they would
	// never see it. The sandbox is not what this test is about.
	d := &dispatch.Dispatcher{File: f, Checkpointer: st, Jobs: 1, NoSandbox: true, Report: func(e dispatch.Event) {
		if e.Kind != dispatch.EventProgress {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if len(phases) == 0 || phases[len(phases)-1] != e.Phase {
			phases = append(phases, e.Phase)
		}
		if e.Phase == "verify" {
			require.NoError(t, os.WriteFile(signal, nil, 0o644))
		}
	}}
	sum, err := d.Run(ctx)
	require.NoError(t, err)
	require.Len(t, sum.Units, 1)
	assert.Equal(t, tasks.StatusDone, sum.Units[0].Status, "the tests saw the verify phase reported while they ran: %+v", sum.Units[0])
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"planning", "executing", "verify", "done"}, phases)
}
