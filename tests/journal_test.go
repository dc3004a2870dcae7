package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// killedRun makes the state a run killed with kill -9 leaves: tasks.json
// as its last save had it (file) and, in the plan's results journal, the
// outcomes it made durable since (journal). It returns the repository and
// the journal's path. Task 1's executor appends "1" to the returned log.
func killedRun(t *testing.T, file, journal string) (repo, jpath, log string) {
	t.Helper()
	log = filepath.Join(t.TempDir(), "ran.log")
	file = strings.ReplaceAll(file, "LOG", log)
	repo = newRepo(t, map[string]string{"tasks.json": file})
	plan := planOf(t, repo, "tasks.json", "")
	require.NoError(t, os.MkdirAll(plan.Dir, 0o755))
	jpath = filepath.Join(plan.Dir, "results.journal")
	require.NoError(t, os.WriteFile(jpath, []byte(journal), 0o600))
	return repo, jpath, log
}

const journalTasks = `{"tasks": [
  {"id": 1, "title": "One", "status": "STATUS", "max_retries": 2, "test_cmd": "true",
   "executor": {"command": ["sh", "-c", "echo 1 >> 'LOG'"]}}
]}
`

// statusOf runs statgraph status --json in repo and returns each task's
// status.
func statusOf(t *testing.T, repo string) map[string]string {
	t.Helper()
	r := statgraph(t, repo, "status", "--json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	out := map[string]string{}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	for dec.More() {
		var row struct{ ID, Status, Reason string }
		require.NoError(t, dec.Decode(&row))
		out[row.ID] = row.Status + " " + row.Reason
	}
	return out
}

// A run killed after task 1 failed, before tasks.json was saved again, has
// the failure only in its journal: statgraph status shows it (the table
// and --json alike), and writes neither tasks.json nor the journal.
func TestStatusShowsOutcomesOnlyInTheJournal(t *testing.T) {
	t.Parallel()
	journal := `{"id":"1","status":"failed","reason":"tests failed twice","retry_count":2}` + "\n"
	repo, jpath, _ := killedRun(t, strings.Replace(journalTasks, "STATUS", "in-progress", 1), journal)
	path := filepath.Join(repo, "tasks.json")
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	assert.Equal(t, map[string]string{"1": "failed tests failed twice"}, statusOf(t, repo))
	r := statgraph(t, repo, "status")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Regexp(t, `(?m)^1\s+failed\s+-\s+2/2\s`, r.stdout)

	after, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "status writes nothing")
	kept, err := os.ReadFile(jpath)
	require.NoError(t, err)
	assert.Equal(t, journal, string(kept), "status leaves the journal as it is")
}

// A failure recorded only in the journal of a killed run is retried by
// run --retry-failed: the journal goes into the file before the failed
// tasks are sent back to pending, not after (which would mark the task
// failed again without running it).
func TestRetryFailedRetriesAFailureOnlyInTheJournal(t *testing.T) {
	t.Parallel()
	repo, jpath, log := killedRun(t, strings.Replace(journalTasks, "STATUS", "in-progress", 1),
		`{"id":"1","status":"failed","reason":"tests failed twice","retry_count":2}`+"\n")

	r := statgraph(t, repo, "run", "--plain", "--no-sandbox", "--retry-failed", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "back to pending")
	ran, err := os.ReadFile(log)
	require.NoError(t, err, "task 1 ran again")
	assert.Equal(t, "1\n", string(ran))
	ts := readTasks(t, filepath.Join(repo, "tasks.json"))
	assert.Equal(t, "done", ts["1"].Status)
	assert.Equal(t, 1, ts["1"].RetryCount, "the count started again")
	rest, err := os.ReadFile(jpath)
	require.NoError(t, err)
	assert.Empty(t, string(rest))
}

// A run killed after it saved task 1's failure in tasks.json but before it
// emptied the journal leaves an old outcome there. statgraph reset 1 and
// the next run must not bring it back: the task runs again. The same holds
// for a failure only in the journal: reset takes it in first, so the task
// can be reset at all.
func TestResetIsNotUndoneByAnOldJournal(t *testing.T) {
	t.Parallel()
	failed := `{"id":"1","status":"failed","reason":"tests failed twice","retry_count":2}` + "\n"
	for _, status := range []string{"failed", "in-progress"} {
		t.Run("file says "+status, func(t *testing.T) {
			t.Parallel()
			repo, jpath, log := killedRun(t, strings.Replace(journalTasks, "STATUS", status, 1), failed)

			r := statgraph(t, repo, "reset", "1")
			require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			assert.Equal(t, "pending", readTasks(t, filepath.Join(repo, "tasks.json"))["1"].Status)
			rest, err := os.ReadFile(jpath)
			require.NoError(t, err)
			assert.Empty(t, string(rest), "reset empties the journal it took in")
			assert.Equal(t, map[string]string{"1": "pending "}, statusOf(t, repo))

			r = statgraph(t, repo, "run", "--plain", "--no-sandbox", "tasks.json")
			require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			ran, err := os.ReadFile(log)
			require.NoError(t, err, "task 1 ran again")
			assert.Equal(t, "1\n", string(ran))
			assert.Equal(t, "done", readTasks(t, filepath.Join(repo, "tasks.json"))["1"].Status)
		})
	}
}

// A task done only in the journal of a killed run (tasks.json still says
// in-progress) is finished for statgraph clean too: clean takes the
// journal into the file first, as run and reset do, then removes the
// task's workspace and checkpoints.
func TestCleanAppliesTheJournalOfAKilledRun(t *testing.T) {
	t.Parallel()
	repo, jpath, _ := killedRun(t, strings.Replace(journalTasks, "STATUS", "pending", 1), "")
	r := statgraph(t, repo, "run", "--plain", "--no-sandbox", "--keep-workspaces", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	plan := planOf(t, repo, "tasks.json", "")
	require.DirExists(t, filepath.Join(plan.WorkDir(), "1"))
	// Rewind to the moment of a kill: done in the journal, not in the file.
	path := filepath.Join(repo, "tasks.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), `"done"`)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), `"done"`, `"in-progress"`, 1)), 0o644))
	require.NoError(t, os.WriteFile(jpath, []byte(`{"id":"1","status":"done"}`+"\n"), 0o600))

	r = statgraph(t, repo, "clean", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "task 1: removed its workspace (")
	assert.NoDirExists(t, filepath.Join(plan.WorkDir(), "1"))
	assert.Contains(t, r.stdout, "deleted the checkpoints of 1 finished task(s): 1")
	assert.Equal(t, "done", readTasks(t, path)["1"].Status, "the journal's outcome is in the file")
	rest, err := os.ReadFile(jpath)
	require.NoError(t, err)
	assert.Empty(t, string(rest), "clean empties the journal it took in")
}
