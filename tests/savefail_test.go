package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSaveFailureEndsRun makes tasks.json unwritable in the middle of a run
// (task 1's executor removes the directory holding it, as a full disk or a
// vanished mount would) while task 2 is still running. statgraph must wait
// for task 2, start nothing new, and exit 1 saying it could not save the
// file, rather than hang. It runs unsandboxed: the sandbox would (rightly)
// stop the executor from removing a directory outside its workspace.
func TestSaveFailureEndsRun(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	tasksDir, log := filepath.Join(tmp, "plan"), filepath.Join(tmp, "effects.log")
	require.NoError(t, os.Mkdir(tasksDir, 0o755))
	repo := newRepo(t, map[string]string{"README": "save failure\n"})
	logged := func(id int, then string) string {
		return fmt.Sprintf(`["sh", "-c", "echo exec %d >> '%s'; %s"]`, id, log, then)
	}
	content := fmt.Sprintf(`{"tasks": [
  {"id": 1, "title": "Removes the tasks directory", "executor": {"command": %s}, "test_cmd": "true"},
  {"id": 2, "title": "Slow", "executor": {"command": %s}, "test_cmd": "true"},
  {"id": 3, "title": "After 1", "dependencies": [1], "executor": {"command": %s}, "test_cmd": "true"}
]}
`, logged(1, "sleep 0.3; rm -rf '"+tasksDir+"'"), logged(2, "sleep 2; echo finished 2 >> '"+log+"'"), logged(3, "true"))
	require.NoError(t, os.WriteFile(filepath.Join(tasksDir, "tasks.json"), []byte(content), 0o644))

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd, stdout, stderr := command(ctx, tmp, "run", noSandbox, "-j", "2", "--repo", repo, filepath.Join(tasksDir, "tasks.json"))
	err := cmd.Run()
	require.NoError(t, ctx.Err(), "statgraph hung after tasks.json could not be saved\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	r := wait(t, err, stdout, stderr)
	assert.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "save tasks file")
	lines := effectLines(t, log)
	assert.ElementsMatch(t, []string{"exec_1", "exec_2", "finished_2"}, lines, "task 2 ran to its end and task 3 never started")
}
