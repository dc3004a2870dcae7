package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRetryFailedAndReset lets two tasks fail (and a third be blocked by
// one of them) because of a problem outside the tasks, fixes it, and sends
// them back with statgraph reset and statgraph run --retry-failed: the
// file's results are cleared, the tasks run again and end done. The
// problem is a mark file in a temporary directory that the checks look
// for; the sandbox gives checks a private /tmp, so the runs here pass
// --no-sandbox (the sandbox is not what this test is about).
func TestRetryFailedAndReset(t *testing.T) {
	t.Parallel()
	marks := t.TempDir()
	check := func(name string) string { return fmt.Sprintf(`"test -e '%s/%s'"`, marks, name) }
	repo := newRepo(t, map[string]string{"tasks.json": fmt.Sprintf(`{"tasks": [
  {"id": 1, "title": "Needs fix-1", "max_retries": 1, "executor": {"command": ["true"]}, "test_cmd": %s},
  {"id": 2, "title": "After 1", "dependencies": [1], "executor": {"command": ["true"]}, "test_cmd": "true"},
  {"id": 3, "title": "Needs fix-3", "max_retries": 1, "executor": {"command": ["true"]}, "test_cmd": %s}
]}
`, check("fix-1"), check("fix-3"))})
	path := filepath.Join(repo, "tasks.json")

	r := statgraph(t, repo, "run", "--plain", "--no-sandbox", "tasks.json")
	require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	ts := readTasks(t, path)
	require.Equal(t, "failed", ts["1"].Status)
	require.Equal(t, "blocked", ts["2"].Status)
	require.Equal(t, "failed", ts["3"].Status)

	before, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, args := range [][]string{{"reset", "9"}, {"reset"}} {
		bad := statgraph(t, repo, args...)
		assert.Equal(t, 2, bad.code, "%v\nstderr:\n%s", args, bad.stderr)
		after, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, string(before), string(after), "%v changed nothing", args)
	}

	require.NoError(t, os.WriteFile(filepath.Join(marks, "fix-3"), nil, 0o644))
	r = statgraph(t, repo, "reset", "3")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "back to pending")
	ts = readTasks(t, path)
	assert.Equal(t, "pending", ts["3"].Status)
	assert.Empty(t, ts["3"].StatusReason)
	assert.Zero(t, ts["3"].RetryCount)
	assert.Nil(t, ts["3"].FailedAt)
	assert.Equal(t, "failed", ts["1"].Status, "reset touches only the tasks named")
	done := statgraph(t, repo, "reset", "3")
	assert.Equal(t, 2, done.code, "a pending task cannot be reset\nstderr:\n%s", done.stderr)

	r = statgraph(t, repo, "run", "--plain", "--no-sandbox", "tasks.json")
	assert.Equal(t, 1, r.code, "task 1 is still failed\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	ts = readTasks(t, path)
	assert.Equal(t, "done", ts["3"].Status, "the reset task ran again")
	assert.Equal(t, 1, ts["3"].RetryCount)
	assert.Equal(t, "failed", ts["1"].Status, "a plain run does not retry failed tasks")

	require.NoError(t, os.WriteFile(filepath.Join(marks, "fix-1"), nil, 0o644))
	r = statgraph(t, repo, "run", "--plain", "--no-sandbox", "--retry-failed", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	ts = readTasks(t, path)
	for _, id := range []string{"1", "2", "3"} {
		assert.Equal(t, "done", ts[id].Status, "task %s", id)
		assert.Nil(t, ts[id].FailedAt, "task %s", id)
	}
	assert.Equal(t, 1, ts["1"].RetryCount, "the count starts again")
}
