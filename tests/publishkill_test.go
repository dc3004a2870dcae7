package tests

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

// runKilledAfterPublish runs statgraph run in dir with the test hook that
// SIGKILLs it once task 1's branch is published and before its outcome is
// recorded (dispatch/landpoint.go), and waits for the kill.
func runKilledAfterPublish(t *testing.T, dir string, extra ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	marker := filepath.Join(t.TempDir(), "killed")
	cmd, stdout, stderr := command(ctx, dir, append([]string{"run", noSandbox, "-j", "1"}, append(extra, "tasks.json")...)...)
	cmd.Env = append(cmd.Env, "STATGRAPH_TEST_LAND_KILL=published 1 "+marker)
	err := cmd.Run()
	ee, ok := errors.AsType[*exec.ExitError](err)
	require.True(t, ok && !ee.Exited(), "statgraph was not killed at the hook: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	require.True(t, fileExists(marker), "the kill point was not reached")
}

// TestPublishedBeforeKillTakenUp: statgraph run killed (SIGKILL) after a
// task's branch was published into the repository and before its outcome
// was recorded leaves the task in-progress; the next run takes up the
// published work: the task ends done, its executor does not run again and
// its branch stays where it was published. Both with the workspace
// removed (the default) and kept (--keep-workspaces).
func TestPublishedBeforeKillTakenUp(t *testing.T) {
	t.Parallel()
	for _, keep := range []bool{false, true} {
		name := "workspace removed"
		var extra []string
		if keep {
			name, extra = "workspace kept", []string{"--keep-workspaces"}
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			log := filepath.Join(t.TempDir(), "effects.log")
			dir := newRepo(t, map[string]string{"tasks.json": effectsTasksJSON(t, log, []effectTask{{id: 1, passOn: 1}})})
			runKilledAfterPublish(t, dir, extra...)
			assert.Equal(t, "in-progress", readTasks(t, filepath.Join(dir, "tasks.json"))["1"].Status, "the kill came before the outcome was recorded")
			branch := planOf(t, dir, "tasks.json", "").Branch("1")
			tip := gittest.Git(t, dir, "rev-parse", branch)

			r := statgraph(t, dir, append([]string{"run", noSandbox, "-j", "1"}, append(extra, "tasks.json")...)...)
			require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			got := readTasks(t, filepath.Join(dir, "tasks.json"))["1"]
			assert.Equal(t, "done", got.Status)
			assert.Equal(t, 1, got.RetryCount)
			assert.Equal(t, []string{"exec_1_1", "verify_1_1"}, effectLines(t, log), "the executor and the check ran once, before the kill")
			assert.Equal(t, tip, gittest.Git(t, dir, "rev-parse", branch), "the published branch stays at the task's work")
			assert.Contains(t, r.stderr+r.stdout, "took up its branch")
		})
	}
}

// TestPublishedBranchMovedAfterKill: when the branch a killed run
// published holds something else by the next run (moved by the user),
// the task is not run again over it: it ends interrupted with a reason
// naming the branch, its commit and what to do, and the branch is left
// alone.
func TestPublishedBranchMovedAfterKill(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "effects.log")
	dir := newRepo(t, map[string]string{"tasks.json": effectsTasksJSON(t, log, []effectTask{{id: 1, passOn: 1}})})
	runKilledAfterPublish(t, dir)
	branch := planOf(t, dir, "tasks.json", "").Branch("1")
	other := gittest.Git(t, dir, "rev-parse", "HEAD")
	gittest.Git(t, dir, "branch", "-f", branch, other)

	r := statgraph(t, dir, "run", noSandbox, "-j", "1", "tasks.json")
	require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	got := readTasks(t, filepath.Join(dir, "tasks.json"))["1"]
	assert.Equal(t, "interrupted", got.Status)
	assert.Contains(t, got.StatusReason, branch)
	assert.Contains(t, got.StatusReason, other)
	assert.Contains(t, got.StatusReason, "rename or delete")
	assert.Equal(t, []string{"exec_1_1", "verify_1_1"}, effectLines(t, log), "nothing ran again")
	assert.Equal(t, other, gittest.Git(t, dir, "rev-parse", branch), "the branch is left alone")
}
