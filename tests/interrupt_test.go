package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCtrlC sends SIGINT to a run while a task's executor (an agent
// command sleeping 30 s) is running. One Ctrl-C cancels the run at once: the
// command is killed, the task is marked interrupted and tasks.json saved; a
// second one exits at once without waiting for that. Either way the exit
// code is 130 within seconds, and resume runs the executor's attempt again
// and completes the task.
func TestCtrlC(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		signals  int
		execRuns int           // times "exec 1 1" is logged after resume
		maxWait  time.Duration // nor later
		sleep    string        // how long the executor sleeps before the resume
	}{
		{name: "once: cancel and save", signals: 1, execRuns: 2, sleep: "30", maxWait: 5 * time.Second},
		{name: "twice: exit at once", signals: 2, execRuns: 2, sleep: "30", maxWait: 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			log, sleep := filepath.Join(tmp, "effects.log"), filepath.Join(tmp, "sleep")
			require.NoError(t, os.WriteFile(sleep, []byte(tt.sleep), 0o644))
			exec := effectTask{id: 1, passOn: 1, execSleep: "$(cat '" + sleep + "')"}
			dir := newRepo(t, map[string]string{"tasks.json": effectsTasksJSON(t, log, []effectTask{exec})})
			file := filepath.Join(dir, "tasks.json")

			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd, stdout, stderr := command(ctx, dir, "run", noSandbox, "tasks.json")
			require.NoError(t, cmd.Start())
			waitForLines(t, log, 1, time.Minute)
			sent := time.Now()
			for range tt.signals {
				require.NoError(t, syscall.Kill(cmd.Process.Pid, syscall.SIGINT))
				time.Sleep(100 * time.Millisecond)
			}
			r := wait(t, cmd.Wait(), stdout, stderr)
			took := time.Since(sent)
			assert.Equal(t, 130, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			assert.Contains(t, r.stderr, "statgraph resume")
			assert.Less(t, took, tt.maxWait, "took too long to stop")

			task := readTasks(t, file)["1"]
			assert.Nil(t, task.FailedAt)
			assert.Equal(t, []string{"exec_1_1"}, effectLines(t, log), "verification did not start")
			if tt.signals == 1 {
				assert.Equal(t, "interrupted", task.Status)
				assert.Contains(t, task.StatusReason, "resume")
				assert.Empty(t, leftovers(t, dir, "tasks.json"), "no lock or temporary file left")
				// Since the first Ctrl-C cancels at once (it no longer lets
				// the running step finish), the executor was killed in its
				// sleep: it never wrote its work, in the workspace the
				// interrupted task keeps for the resume.
				ws := filepath.Join(planOf(t, dir, "tasks.json", "").WorkDir(), "1")
				assert.DirExists(t, ws, "the interrupted task keeps its workspace")
				assert.NoFileExists(t, filepath.Join(ws, "work-1.txt"), "the executor was killed before it finished its work")
			}

			require.NoError(t, os.WriteFile(sleep, []byte("0.1"), 0o644))
			r = statgraph(t, dir, "resume", noSandbox, "tasks.json")
			require.Equal(t, 0, r.code, "resume completes the task\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			task = readTasks(t, file)["1"]
			assert.Equal(t, "done", task.Status)
			assert.Equal(t, 1, task.RetryCount)
			assert.Empty(t, task.StatusReason)
			counts := countLines(effectLines(t, log))
			assert.Equal(t, tt.execRuns, counts["exec_1_1"], "executor runs of attempt 1")
			assert.Equal(t, 1, counts["verify_1_1"], "verifier runs of attempt 1")
			assert.Len(t, counts, 2, "no other step ran: %v", counts)
		})
	}
}

// TestSecondRunRefused starts two runs on one tasks file: the second exits
// 2 naming the lock file and changes nothing; the first finishes.
func TestSecondRunRefused(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "effects.log")
	// The first run's executor holds until the refused runs are done, so
	// tasks.json stays as the first run left it when the executor started
	// (status in_progress) however slow the machine: the file is written
	// again only after a verification (retry_count) and at the end.
	gate := filepath.Join(t.TempDir(), "release")
	dir := newRepo(t, map[string]string{"tasks.json": effectsTasksJSON(t, log, []effectTask{{id: 1, passOn: 1, execSleep: "0", execGate: gate}})})
	file := filepath.Join(dir, "tasks.json")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	defer func() { _ = os.WriteFile(gate, nil, 0o644) }() // release it when an assertion stops the test early
	first, stdout, stderr := command(ctx, dir, "run", noSandbox, "tasks.json")
	require.NoError(t, first.Start())
	waitForLines(t, log, 1, time.Minute)
	before, err := os.ReadFile(file)
	require.NoError(t, err)

	for _, cmd := range []string{"run", "resume"} {
		r := statgraph(t, dir, cmd, "tasks.json")
		assert.Equal(t, 2, r.code, "%s while another run holds the lock\nstdout:\n%s\nstderr:\n%s", cmd, r.stdout, r.stderr)
		assert.Contains(t, r.stderr, "tasks.json.lock", "%s names the lock file", cmd)
		assert.Contains(t, r.stderr, fmt.Sprintf("pid %d", first.Process.Pid), "%s names the holder", cmd)
		assert.Contains(t, r.stderr, "another statgraph run", cmd)
		after, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Equal(t, string(before), string(after), "%s changed tasks.json", cmd)
	}
	require.NoError(t, os.WriteFile(gate, nil, 0o644))

	r := wait(t, first.Wait(), stdout, stderr)
	assert.Equal(t, 0, r.code, "the first run finishes\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Equal(t, "done", readTasks(t, file)["1"].Status)
	assert.Equal(t, []string{"exec_1_1", "verify_1_1"}, effectLines(t, log), "the refused runs ran nothing")
	assert.NoFileExists(t, file+".lock")
}
