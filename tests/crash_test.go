package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

// crashTasks: 1 passes on its second attempt, 2 exhausts its two retries,
// 3 waits for 1 and passes at once, 4 is blocked by 2, 5 passes on its third
// attempt. Run with -j 1, the log has one executor or verifier line at a
// time, so the step running at a kill is the last line logged.
var crashTasks = []effectTask{
	{id: 1, passOn: 2},
	{id: 2, retries: 2},
	{id: 3, deps: []int{1}, passOn: 1},
	{id: 4, deps: []int{2}, passOn: 1},
	{id: 5, passOn: 3},
}

// TestKillAndResume kills statgraph with SIGKILL in the middle of a step,
// runs `statgraph resume`, and checks that every task ends as in an
// uninterrupted run, that no completed step ran again (only the step that
// was running at the kill runs twice), and that tasks.json was valid JSON
// at every moment.
func TestKillAndResume(t *testing.T) {
	t.Parallel()
	cleanLog := filepath.Join(t.TempDir(), "effects.log")
	clean := newRepo(t, map[string]string{"tasks.json": effectsTasksJSON(t, cleanLog, crashTasks)})
	r := statgraph(t, clean, "run", noSandbox, "-j", "1", "tasks.json")
	require.Equal(t, 1, r.code, "uninterrupted run\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	want := withoutTimes(readTasks(t, filepath.Join(clean, "tasks.json")))
	wantLines := effectLines(t, cleanLog)
	require.Len(t, wantLines, 16, "8 attempts, each an executor and a verifier line:\n%q", wantLines)
	for _, n := range countLines(wantLines) {
		require.Equal(t, 1, n, "an uninterrupted run logs each step once: %q", wantLines)
	}

	// Kill after the first line (planner done, executor of task 1 running),
	// in the middle of the run, and during the last tasks.
	for _, killAt := range []int{1, 6, 13} {
		t.Run(fmt.Sprintf("kill at line %d", killAt), func(t *testing.T) {
			t.Parallel()
			log := filepath.Join(t.TempDir(), "effects.log")
			dir := newRepo(t, map[string]string{"tasks.json": effectsTasksJSON(t, log, crashTasks)})
			file := filepath.Join(dir, "tasks.json")
			reader := pollJSON(t, file)

			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd, stdout, stderr := command(ctx, dir, "run", noSandbox, "-j", "1", "tasks.json")
			require.NoError(t, cmd.Start())
			waitForLines(t, log, killAt, time.Minute)
			require.NoError(t, syscall.Kill(cmd.Process.Pid, syscall.SIGKILL))
			err := cmd.Wait()
			require.Error(t, err, "statgraph was killed\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
			atKill := effectLines(t, log)
			running := atKill[len(atKill)-1]
			// Let the orphaned step finish (its shell names the log) so it
			// cannot interleave with the resumed run's log lines.
			waitProcessesGone(t, log, time.Minute)

			r := statgraph(t, dir, "resume", noSandbox, "-j", "1", "tasks.json")
			assert.Equal(t, 1, r.code, "resume ends like the uninterrupted run\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			reads, bad := reader()
			assert.Positive(t, reads, "the reader read tasks.json")
			assert.Empty(t, bad, "the reader saw invalid JSON")

			got := withoutTimes(readTasks(t, file))
			assert.Equal(t, want, got, "tasks end as in an uninterrupted run")
			assert.NotContains(t, leftovers(t, dir, "tasks.json"), "tasks.json.lock", "resume released the lock")

			counts := countLines(effectLines(t, log))
			for _, l := range wantLines {
				n := 1
				if l == running {
					n = 2
				}
				assert.Equal(t, n, counts[l], "step %s ran %d times; want %d (the step running at the kill was %s)", l, counts[l], n, running)
				delete(counts, l)
			}
			assert.Empty(t, counts, "steps an uninterrupted run does not take")

			plan := planOf(t, dir, "tasks.json", "")
			for _, id := range []string{"1", "3", "5"} {
				b := plan.Branch(id)
				assert.Equal(t, gittest.Git(t, clean, "show", b+":work-"+id+".txt"), gittest.Git(t, dir, "show", b+":work-"+id+".txt"), "branch %s", b)
				assert.Equal(t, planOf(t, clean, "tasks.json", "").Branch(id), b, "branch names do not depend on where the repository is")
			}
		})
	}
}

// withoutTimes replaces each failed_at by "set", since two runs fail at
// different times.
func withoutTimes(ts map[string]taskDoc) map[string]taskDoc {
	set := "set"
	for id, task := range ts {
		if task.FailedAt != nil {
			task.FailedAt = &set
			ts[id] = task
		}
	}
	return ts
}

// pollJSON reads path in a loop until the returned function is called,
// which stops the loop and returns how many reads there were and the
// contents that were not valid JSON.
func pollJSON(t *testing.T, path string) func() (reads int, bad []string) {
	t.Helper()
	var stop atomic.Bool
	var wg sync.WaitGroup
	var n int
	var invalid []string
	wg.Go(func() {
		for !stop.Load() {
			data, err := os.ReadFile(path)
			if err == nil {
				n++
				if !json.Valid(data) {
					invalid = append(invalid, string(data))
				}
			}
			time.Sleep(time.Millisecond)
		}
	})
	done := func() (int, []string) {
		stop.Store(true)
		wg.Wait()
		return n, invalid
	}
	t.Cleanup(func() { done() })
	return done
}

// waitProcessesGone waits until no process whose command line contains
// needle is left, failing the test after timeout.
func waitProcessesGone(t testing.TB, needle string, timeout time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(timeout); ; time.Sleep(10 * time.Millisecond) {
		var left []string
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err == nil && strings.Contains(string(b), needle) {
				left = append(left, e.Name())
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v naming %s still run after %s", left, needle, timeout)
		}
	}
}
