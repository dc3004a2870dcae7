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
// vanished mount would, then keeps running). Task 2 ends soon after, and
// the save that follows fails. statgraph must wait for task 1, start
// nothing new (task 3, which waits for task 1), and exit 1 saying it could
// not save the file, rather than hang. Saves are coalesced (see tasks'
// saver), so the failure shows at the first save after the removal: task
// 2's end, not task 1's, makes that moment certain. Task 1 waits a little
// before the removal, so that the run's first save is not writing into the
// directory then (rm -rf would fail to remove it). It runs unsandboxed: the
// sandbox would (rightly) stop the executor from removing a directory
// outside its workspace.
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
  {"id": 1, "title": "Removes the tasks directory, then works on", "executor": {"command": %s}, "test_cmd": "true"},
  {"id": 2, "title": "Quick", "executor": {"command": %s}, "test_cmd": "true"},
  {"id": 3, "title": "After 1", "dependencies": [1], "executor": {"command": %s}, "test_cmd": "true"}
]}
`, logged(1, "sleep 0.3; rm -rf '"+tasksDir+"'; sleep 2; echo finished 1 >> '"+log+"'"), logged(2, "sleep 1"), logged(3, "true"))
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
	assert.ElementsMatch(t, []string{"exec_1", "exec_2", "finished_1"}, lines, "task 1 ran to its end and task 3 never started")
}
