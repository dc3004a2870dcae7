package tests

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A task naming a dependency no task has is held alone: validate exits 0
// and its warning says which task, which id and where; run runs the other
// tasks and leaves that task blocked with the reason, and the task that
// waits for it blocked in turn.
func TestUnknownDependencyBlocksOnlyItsTask(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"tasks.json": `{"tasks": [
  {"id": 1, "title": "runs", "executor": {"command": ["true"]}, "test_cmd": "true"},
  {"id": 2, "title": "names a missing task", "executor": {"command": ["true"]}, "test_cmd": "true", "dependencies": [1, 9]},
  {"id": 3, "title": "waits for 2", "executor": {"command": ["true"]}, "test_cmd": "true", "dependencies": [2]},
  {"id": 4, "title": "also runs", "executor": {"command": ["true"]}, "test_cmd": "true"}
]}
`})
	v := statgraph(t, repo, "validate", "tasks.json")
	require.Equal(t, 0, v.code, "stdout:\n%s\nstderr:\n%s", v.stdout, v.stderr)
	assert.Contains(t, v.stdout, "tasks.json:3:121: task 2: dependency 9 does not exist (known ids: 1, 2, 3, 4); task 2 is blocked until it is fixed")

	r := statgraph(t, repo, "run", noSandbox, "tasks.json")
	got := readTasks(t, filepath.Join(repo, "tasks.json"))
	assert.Equal(t, "done", got["1"].Status, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Equal(t, "done", got["4"].Status)
	assert.Equal(t, "blocked", got["2"].Status)
	assert.Contains(t, got["2"].StatusReason, "dependency 9 does not exist")
	assert.Contains(t, got["2"].StatusReason, "tasks.json:3:121")
	assert.Equal(t, "blocked", got["3"].Status)
	assert.Equal(t, "dependency 2 blocked", got["3"].StatusReason)
}
