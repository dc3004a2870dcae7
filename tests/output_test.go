package tests

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outputTasks: task 1 passes on its first attempt, task 2 fails its only
// attempt.
var outputTasks = []effectTask{{id: 1, passOn: 1}, {id: 2, retries: 1}}

// TestOutputStreams: progress lines go to stderr, the summary table to
// stdout, so that stdout can be piped.
func TestOutputStreams(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "effects.log")
	dir := newRepo(t, map[string]string{"tasks.json": effectsTasksJSON(t, log, outputTasks)})
	r := statgraph(t, dir, "run", "tasks.json")
	require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)

	assert.Contains(t, r.stderr, "task 1 running: executing, attempt 1/3", "progress on stderr")
	assert.Contains(t, r.stderr, "task 1 running: verify, attempt 1/3", "the verify phase is shown while the tests run")
	assert.Contains(t, r.stderr, "task 2 FAILED after 1 attempts", "the orchestrator's lines on stderr")
	assert.NotContains(t, r.stderr, "TASK  STATUS", "no summary on stderr")
	assert.NotContains(t, r.stdout, "running", "no progress on stdout")
	assert.Contains(t, r.stdout, "1 done, 1 failed")
	assert.Equal(t, "done", column(t, r.stdout, "1", "STATUS"))
	assert.Equal(t, planOf(t, dir, "tasks.json", "").Branch("1"), column(t, r.stdout, "1", "BRANCH"))
}

// jsonLines decodes every line of out as one JSON object.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "line %q of:\n%s", sc.Text(), out)
		objs = append(objs, m)
	}
	return objs
}

func keys(m map[string]any) []string {
	var k []string
	for key := range m {
		k = append(k, key)
	}
	slices.Sort(k)
	return k
}

// TestJSONOutput: run --json prints one JSON object per task and nothing
// else on stdout; status --json one per task with the run store's phase and
// tokens; history --json one object with the attempts and their diffs.
func TestJSONOutput(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "effects.log")
	dir := newRepo(t, map[string]string{"tasks.json": effectsTasksJSON(t, log, outputTasks)})
	r := statgraph(t, dir, "run", "--json", "tasks.json")
	require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	units := jsonLines(t, r.stdout)
	require.Len(t, units, 2, "one object per task:\n%s", r.stdout)
	for _, u := range units {
		assert.Equal(t, []string{"attempts", "branch", "cost_usd", "elapsed_ms", "id", "reason", "status", "title", "tokens", "usage"}, keys(u))
	}
	assert.Equal(t, "1", units[0]["id"])
	assert.Equal(t, "task 1", units[0]["title"])
	assert.Equal(t, "done", units[0]["status"])
	assert.Equal(t, 1.0, units[0]["attempts"])
	branch := planOf(t, dir, "tasks.json", "").Branch("1")
	assert.Equal(t, branch, units[0]["branch"])
	assert.Equal(t, 0.0, units[0]["tokens"])
	assert.Greater(t, units[0]["elapsed_ms"], 100.0, "the task ran its executor and its tests, 0.2 s each")
	assert.Equal(t, "failed", units[1]["status"])
	assert.Equal(t, "failed after 1 attempts", units[1]["reason"])
	assert.Contains(t, r.stderr, "task 2 FAILED", "progress still on stderr")

	st := statgraph(t, dir, "status", "--json", "tasks.json")
	require.Equal(t, 0, st.code, st.stderr)
	rows := jsonLines(t, st.stdout)
	require.Len(t, rows, 2, st.stdout)
	assert.Equal(t, []string{"attempts", "cost_usd", "id", "max_attempts", "phase", "reason", "status", "title", "tokens", "usage"}, keys(rows[0]))
	assert.Equal(t, map[string]any{"id": "2", "title": "task 2", "status": "failed", "reason": "failed after 1 attempts",
		"phase": "failed", "attempts": 1.0, "max_attempts": 1.0, "tokens": 0.0, "cost_usd": 0.0, "usage": map[string]any{}}, rows[1])

	// Task 1's workspace is removed once published: history reads the
	// published branch.
	assert.NoDirExists(t, filepath.Join(planOf(t, dir, "tasks.json", "").WorkDir(), "1"))
	h := statgraph(t, dir, "history", "--json", "1")
	require.Equal(t, 0, h.code, h.stderr)
	var hist struct {
		ID       string `json:"id"`
		Phase    string `json:"phase"`
		Branch   string `json:"branch"`
		Diff     string `json:"diff"`
		Attempts []struct {
			N      int    `json:"n"`
			Passed bool   `json:"passed"`
			Commit string `json:"commit"`
			Diff   string `json:"diff"`
		} `json:"attempts"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.stdout), &hist), "history --json:\n%s", h.stdout)
	assert.Equal(t, "1", hist.ID)
	assert.Equal(t, "done", hist.Phase)
	assert.Equal(t, branch, hist.Branch)
	assert.Contains(t, hist.Diff, "+attempt 1")
	require.Len(t, hist.Attempts, 1)
	assert.True(t, hist.Attempts[0].Passed)
	assert.NotEmpty(t, hist.Attempts[0].Commit)
	assert.Contains(t, hist.Attempts[0].Diff, "work-1.txt")
}

// TestUncommittedWarning: a run in a repository with uncommitted changes
// warns on stderr, naming them, since the tasks start from HEAD; a clean
// repository, or one where only tasks.json changed (statgraph writes it),
// gets no warning.
func TestUncommittedWarning(t *testing.T) {
	t.Parallel()
	log := filepath.Join(t.TempDir(), "effects.log")
	dir := newRepo(t, map[string]string{"tasks.json": effectsTasksJSON(t, log, []effectTask{{id: 1, passOn: 1}}), "notes.txt": "v1\n"})
	r := statgraph(t, dir, "run", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.NotContains(t, r.stderr, "uncommitted", "a clean repository")
	r = statgraph(t, dir, "run", "tasks.json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.NotContains(t, r.stderr, "uncommitted", "tasks.json changed by the last run does not count")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("v2\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "new.go"), []byte("package x\n"), 0o644))
	r = statgraph(t, dir, "run", "tasks.json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stderr, "warning: 2 uncommitted change(s)")
	assert.Contains(t, r.stderr, "new.go")
	assert.Contains(t, r.stderr, "notes.txt")
	assert.Contains(t, r.stderr, "start from the HEAD commit")
	assert.Contains(t, r.stderr, "git add -A && git commit")
	assert.NotContains(t, r.stdout, "uncommitted", "the warning is not in the summary")
}
