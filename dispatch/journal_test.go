package dispatch_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/tasks"
)

// A run killed after a unit finished but before tasks.json was saved again
// left the unit's outcome in the results journal. The next run applies it
// instead of running the unit again, and its dependent starts: no status is
// lost to the kill. A journal line torn by the kill is ignored, and so is
// the outcome of a unit whose status the user changed since.
func TestDispatcherAppliesTheJournalOfAKilledRun(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	log := filepath.Join(t.TempDir(), "ran.log")
	gitRepo(t, dir, map[string]string{
		"tasks.json": `{"defaults": {"test_cmd": "true", "executor": {"command": ["sh", "-c", "echo {task_id} >> '` + log + `'"]}},
 "tasks": [
  {"id": 1, "title": "finished before the kill", "status": "in-progress"},
  {"id": 2, "title": "after 1", "dependencies": [1]},
  {"id": 3, "title": "deferred by the user since", "status": "deferred"}
]}`,
	})
	journal := `{"id":"1","status":"done","retry_count":1}` + "\n" +
		`{"id":"3","status":"failed","reason":"x"}` + "\n" +
		`{"id":"2","status":"fai`
	require.NoError(t, os.WriteFile(filepath.Join(state, "results.journal"), []byte(journal), 0o600))

	path := filepath.Join(dir, "tasks.json")
	f, err := tasks.Load(path, "")
	require.NoError(t, err)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "runs.db"))
	require.NoError(t, err)
	defer st.Close()
	d := &dispatch.Dispatcher{File: f, StateDir: state, Checkpointer: st, Jobs: 2, NoSandbox: true}
	sum, err := d.Run(ctx)
	require.NoError(t, err)

	ran, err := os.ReadFile(log)
	require.NoError(t, err)
	require.Equal(t, "2\n", string(ran), "only task 2 ran: task 1's outcome came from the journal")
	got := map[string]string{}
	for _, u := range sum.Units {
		got[u.ID] = u.Status
	}
	require.Equal(t, map[string]string{"1": tasks.StatusDone, "2": tasks.StatusDone, "3": tasks.StatusDeferred}, got)
	body, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(body), `"retry_count": 1`, "the journal's outcome is in tasks.json")
	rest, err := os.ReadFile(filepath.Join(state, "results.journal"))
	require.NoError(t, err)
	require.Empty(t, strings.TrimSpace(string(rest)), "the journal is emptied once tasks.json holds its outcomes")
}

// When the journal's outcomes cannot be written into tasks.json at the
// start of a run (the user's edit in progress does not parse), the journal
// keeps them: emptying it then would lose them for good.
func TestDispatcherKeepsTheJournalWhileTheFileCannotTakeIt(t *testing.T) {
	dir, state := t.TempDir(), t.TempDir()
	gitRepo(t, dir, map[string]string{
		"tasks.json": `{"tasks": [{"id": 1, "title": "finished before the kill", "status": "in-progress"}]}`,
	})
	journal := `{"id":"1","status":"done","retry_count":1}` + "\n"
	jpath := filepath.Join(state, "results.journal")
	require.NoError(t, os.WriteFile(jpath, []byte(journal), 0o600))
	path := filepath.Join(dir, "tasks.json")
	f, err := tasks.Load(path, "")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(`{"tasks": [{"id": 1, "title": "half`), 0o644))

	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "runs.db"))
	require.NoError(t, err)
	defer st.Close()
	d := &dispatch.Dispatcher{File: f, StateDir: state, Checkpointer: st, NoSandbox: true}
	sum, err := d.Run(ctx)
	require.NoError(t, err)
	require.Len(t, sum.Units, 1)
	require.Equal(t, tasks.StatusDone, sum.Units[0].Status)
	rest, err := os.ReadFile(jpath)
	require.NoError(t, err)
	require.Equal(t, journal, string(rest), "the outcome stays in the journal until tasks.json takes it")
}
