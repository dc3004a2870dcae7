package tests

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

// TestFailedLineOfCandidate: a best-of-N candidate that runs out of
// attempts is not the task failing: the run says "task 1: candidate k
// failed after 1 attempts" for each losing candidate, never "task 1
// FAILED", and the task ends done with the passing candidate.
func TestFailedLineOfCandidate(t *testing.T) {
	t.Parallel()
	// An advisory check failing for both: the passing candidate, with a
	// warning, does not stop the other before it ends.
	dir := newRepo(t, map[string]string{"tasks.json": bestOfTasks("test -f ok.txt",
		`"checks": [{"name": "style", "cmd": "false", "mode": "advisory"}], `, "echo a > a.txt", "echo ok > ok.txt")})
	r := statgraph(t, dir, "run", "--plain", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	out := r.stdout + r.stderr
	assert.NotContains(t, out, "task 1 FAILED")
	assert.Contains(t, out, "task 1: candidate 1 failed after 1 attempts")
	assert.Equal(t, "done", readTasks(t, dir+"/tasks.json")["1"].Status)
}

// TestFailedLineOfLanding: a landing whose check fails on the target's
// tip, with its agent's attempts spent, is not the task failing: land
// says "task 1: landing on main failed after 1 attempts", never "task 1
// FAILED", and the task stays done.
func TestFailedLineOfLanding(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"tasks.json": `{"tasks": [{"id": 1, "title": "One", "max_retries": 1, "test_cmd": "test ! -f block.txt",
  "executor": {"command": ["sh", "-c", "echo one > one.txt"]}}]}
`})
	r := statgraph(t, dir, "run", "--plain", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	gittest.WriteFiles(t, dir, map[string]string{"block.txt": "x\n"})
	gittest.Git(t, dir, "add", "block.txt")
	gittest.Git(t, dir, "commit", "-qm", "block")
	gittest.Git(t, dir, "switch", "-q", "--detach")
	r = statgraph(t, dir, "land", "tasks.json")
	out := r.stdout + r.stderr
	assert.NotContains(t, out, "task 1 FAILED", "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, out, "task 1: landing on main failed after 1 attempts", "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Equal(t, "done", readTasks(t, dir+"/tasks.json")["1"].Status)
}
