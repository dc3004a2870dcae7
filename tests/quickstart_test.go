package tests

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

// TestQuickstart runs examples/quickstart end to end, as `make demo` does,
// and then inspects the result with the read-only commands.
func TestQuickstart(t *testing.T) {
	t.Parallel()
	dir := quickstart(t)
	run := statgraph(t, dir, "run", "-j", "2", "tasks.json")
	require.Equal(t, 1, run.code, "one task fails and one is blocked, so the exit code is 1\nstdout:\n%s\nstderr:\n%s", run.stdout, run.stderr)

	t.Run("tasks.json", func(t *testing.T) {
		got := readTasks(t, filepath.Join(dir, "tasks.json"))
		require.Len(t, got, 3)
		tests := []struct {
			id, status string
			retries    int
			history    []string // prefixes of the error_history entries
			failed     bool
		}{
			{"1", "done", 2, []string{"Retry 0: tests: 1 failed (TestAdd)"}, false},
			{"2", "failed", 2, []string{"Retry 0: tests: 1 failed (TestMul)", "Retry 1: tests: 1 failed (TestMul)"}, true},
			{"3", "blocked", 0, nil, false},
		}
		for _, tt := range tests {
			task := got[tt.id]
			assert.Equal(t, tt.status, task.Status, "task %s status", tt.id)
			assert.Equal(t, tt.retries, task.RetryCount, "task %s retry_count", tt.id)
			if assert.Len(t, task.ErrorHistory, len(tt.history), "task %s error_history: %q", tt.id, task.ErrorHistory) {
				for i, want := range tt.history {
					assert.True(t, strings.HasPrefix(task.ErrorHistory[i], want), "task %s error_history[%d] = %q; want prefix %q", tt.id, i, task.ErrorHistory[i], want)
				}
			}
			if tt.failed {
				if assert.NotNil(t, task.FailedAt, "task %s failed_at", tt.id) {
					at, err := time.Parse(time.RFC3339, *task.FailedAt)
					assert.NoError(t, err, "failed_at is RFC 3339")
					assert.WithinDuration(t, time.Now(), at, 5*time.Minute)
				}
			} else {
				assert.Nil(t, task.FailedAt, "task %s has no failed_at", tt.id)
			}
		}
		assert.Contains(t, got["3"].StatusReason, "dependency 2", "task 3's status_reason names the failed dependency")
	})

	t.Run("branches", func(t *testing.T) {
		plan := planOf(t, dir, "tasks.json", "")
		branches := gittest.Git(t, dir, "branch", "--list", "statgraph/*", "--format=%(refname:short)")
		assert.ElementsMatch(t, []string{plan.Branch("1"), plan.Branch("2")}, strings.Fields(branches))
		assert.Regexp(t, `^statgraph/tasks-[0-9a-f]{6}/1$`, plan.Branch("1"), "short, readable branch names")
		assert.Contains(t, gittest.Git(t, dir, "show", plan.Branch("1")+":calc/calc.go"), "return a + b", "the branch of task 1 carries the fix")
		assert.Contains(t, gittest.Git(t, dir, "show", "main:calc/calc.go"), "return a - b", "the checked-out branch is untouched")
		assert.Equal(t, "main", gittest.Git(t, dir, "rev-parse", "--abbrev-ref", "HEAD"))
	})

	t.Run("summary", func(t *testing.T) {
		assert.Contains(t, run.stdout, "1 done, 1 failed, 1 blocked")
		assert.Contains(t, run.stdout, planOf(t, dir, "tasks.json", "").Branch("1"))
		assert.Contains(t, run.stderr, "task 2 FAILED after 2 attempts")
	})

	t.Run("status", func(t *testing.T) {
		r := statgraph(t, dir, "status", "tasks.json")
		require.Equal(t, 0, r.code, r.stderr)
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		require.Len(t, lines, 4, "a header and one row per task:\n%s", r.stdout)
		assert.Equal(t, []string{"TASK", "STATUS", "PHASE", "ATTEMPTS"}, strings.Fields(lines[0])[:4])
		assert.Equal(t, []string{"1", "done", "done", "2/3"}, strings.Fields(lines[1])[:4])
		assert.Equal(t, []string{"2", "failed", "failed", "2/2"}, strings.Fields(lines[2])[:4])
		assert.Equal(t, []string{"3", "blocked", "-", "0/3"}, strings.Fields(lines[3])[:4])
	})

	t.Run("history", func(t *testing.T) {
		r := statgraph(t, dir, "history", "1")
		require.Equal(t, 0, r.code, r.stderr)
		out := r.stdout
		assert.Contains(t, out, "task 1: Fix Add")
		assert.Contains(t, out, "attempt 1  FAILED")
		assert.Contains(t, out, "attempt 2  passed")
		assert.Contains(t, out, "feedback sent back:")
		feedback := out[strings.Index(out, "feedback sent back:"):]
		assert.Contains(t, feedback, "TestAdd", "the feedback names the failing test")
		assert.Contains(t, out, "Retry 0: tests: 1 failed (TestAdd)")
		assert.Contains(t, out, "diff of branch "+planOf(t, dir, "tasks.json", "").Branch("1"))
		assert.Contains(t, out, "-\treturn a - b\n+\treturn a + b", "the diff shows the fix")
	})

	t.Run("history of a task that never ran", func(t *testing.T) {
		r := statgraph(t, dir, "history", "3")
		assert.Equal(t, 2, r.code)
		assert.Contains(t, r.stderr, "task 3 has no recorded run")
	})
}
