package dispatch_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/tasks"
)

// TestSerialRunsAlone: with -j 3 and three independent tasks, the one
// with "land": "serial" runs with no other beside it. Each stand-in agent
// marks itself running in a shared directory, waits (at most 3 s) for
// another to be running too, and writes down whom it saw; without
// "serial" (before it existed) all three start at once and see each other.
// A serial task waits its turn in file order: task 3 starts after it.
func TestSerialRunsAlone(t *testing.T) {
	dir, shared := t.TempDir(), t.TempDir()
	agent := `#!/bin/sh
id=$1
touch "$SHARED/running-$id"
i=0
while [ "$(ls "$SHARED" | grep -c '^running-')" -lt 2 ] && [ $i -lt 60 ]; do sleep 0.05; i=$((i+1)); done
ls "$SHARED" | grep '^running-' | tr '\n' ' ' > "$SHARED/saw-$id"
rm "$SHARED/running-$id"
echo "$id" > "done-$id.txt"
`
	gitRepo(t, dir, map[string]string{
		"agent.sh": agent,
		"tasks.json": `{"defaults": {"max_retries": 1, "test_cmd": "true", "executor": {"command": ["./agent.sh", "{task_id}"]}},
 "tasks": [{"id": 1, "title": "one"}, {"id": 2, "title": "two", "land": "serial"}, {"id": 3, "title": "three"}]}`,
	})
	t.Setenv("SHARED", shared)
	f, err := tasks.Load(filepath.Join(dir, "tasks.json"), "")
	require.NoError(t, err)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "runs.db"))
	require.NoError(t, err)
	defer st.Close()
	d := &dispatch.Dispatcher{File: f, Checkpointer: st, Jobs: 3, NoSandbox: true, AllowEnv: []string{"SHARED"}, StateDir: t.TempDir()}
	sum, err := d.Run(ctx)
	require.NoError(t, err)
	for _, u := range sum.Units {
		require.Equal(t, tasks.StatusDone, u.Status, "%+v", u)
	}
	saw := func(id string) string {
		b, err := os.ReadFile(filepath.Join(shared, "saw-"+id))
		require.NoError(t, err)
		return strings.TrimSpace(string(b))
	}
	assert.Equal(t, "running-2", saw("2"), "the serial task ran alone")
	assert.NotContains(t, saw("1"), "running-2")
	assert.NotContains(t, saw("3"), "running-2")
}
