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
// (once task 2 has started, task 1's executor renames away the directory holding it, as a vanished
// mount would, then keeps running). Task 2 waits until the directory is
// gone, then ends, and the save that follows fails. statgraph must wait
// for task 1, start nothing new (task 3, which waits for task 1), and exit
// 1 saying it could not save the file, rather than hang. Saves are
// coalesced (see tasks' saver), so the failure shows at the first save
// after the rename: task 2's end, which waits for it, makes that moment
// certain. A rename, unlike rm -rf, cannot be undone by a save writing its
// temporary file into the directory at that moment. It runs unsandboxed:
// the sandbox would (rightly) stop the executor from moving a directory
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
`, logged(1, "n=0; until grep -q 'exec 2' '"+log+"' || [ $n -ge 600 ]; do sleep 0.05; n=$((n+1)); done; mv '"+tasksDir+"' '"+tasksDir+".gone'; sleep 2; echo finished 1 >> '"+log+"'"),
		logged(2, "n=0; while [ -e '"+tasksDir+"' ] && [ $n -lt 600 ]; do sleep 0.05; n=$((n+1)); done"), logged(3, "true"))
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
