package dispatch_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/llm/llmtest"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/tasks"
)

// gitRepo makes a repository in dir with one commit of files.
func gitRepo(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o755))
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
}

// The dispatcher writes retry_count and error_history to tasks.json after
// each verification, not only when the task ends: the stand-in agent's
// second attempt waits until it can read them in the file.
func TestDispatcherRecordsProgressAfterEachVerification(t *testing.T) {
	dir := t.TempDir()
	agent := `#!/bin/sh
# $1 = attempt
if [ "$1" = 1 ]; then echo "first try" > note.txt; exit 0; fi
i=0
while ! grep -q '"retry_count": 1' tasks.json.live 2>/dev/null; do
	i=$((i+1)); [ $i -gt 200 ] && exit 3
	cp "$TASKS_FILE" tasks.json.live 2>/dev/null
	sleep 0.05
done
grep -q 'Retry 0: tests' tasks.json.live && touch fixed
`
	// The sandbox shows no repository of the user's unless a task asks for it.
	gitRepo(t, dir, map[string]string{
		"agent.sh": agent,
		"tasks.json": `{"tasks": [{"id": 1, "title": "progress", "max_retries": 3,
  "test_cmd": ["test", "-f", "fixed"], "sandbox": {"read": ["` + dir + `"]},
  "executor": {"command": ["./agent.sh", "{attempt}"]}}]}`,
	})
	// A temporary file left by a Save that was killed.
	stale := filepath.Join(dir, ".tasks.json.tmp-123")
	require.NoError(t, os.WriteFile(stale, []byte("{"), 0o644))

	path := filepath.Join(dir, "tasks.json")
	t.Setenv("TASKS_FILE", path)
	f, err := tasks.Load(path, "")
	require.NoError(t, err)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "runs.db"))
	require.NoError(t, err)
	defer st.Close()
	d := &dispatch.Dispatcher{File: f, Checkpointer: st, Jobs: 1, AllowEnv: []string{"TASKS_FILE"}}
	sum, err := d.Run(ctx)
	require.NoError(t, err)
	require.Len(t, sum.Units, 1)
	require.Equal(t, tasks.StatusDone, sum.Units[0].Status, "the agent saw the progress in tasks.json: %+v", sum.Units[0])
	require.Equal(t, 2, sum.Units[0].Attempts)
	_, err = os.Stat(stale)
	require.ErrorIs(t, err, os.ErrNotExist)

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, strings.Contains(string(b), `"retry_count": 2`), string(b))
}

// Checks from tasks.json carry their enforcement mode: a failing blocking
// check sends the task back to the executor, a failing advisory one is a
// warning on a task that is done.
func TestDispatcherCheckModes(t *testing.T) {
	dir := t.TempDir()
	gitRepo(t, dir, map[string]string{
		"agent.sh": "#!/bin/sh\n[ \"$1\" = 2 ] && touch fixed\nexit 0\n",
		"tasks.json": `{"tasks": [{"id": 1, "title": "modes", "max_retries": 3,
  "executor": {"command": ["./agent.sh", "{attempt}"]},
  "checks": [
    {"name": "must", "cmd": ["test", "-f", "fixed"], "kind": "test"},
    {"name": "style", "cmd": "echo 'style: too long'; exit 1", "kind": "lint", "mode": "advisory"},
    {"name": "fyi", "cmd": ["false"], "mode": "informational", "timeout": "30s"}
  ]}]}`,
	})
	path := filepath.Join(dir, "tasks.json")
	f, err := tasks.Load(path, "")
	require.NoError(t, err)
	task, _ := f.Task("1")
	require.Len(t, task.Checks, 3)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "runs.db"))
	require.NoError(t, err)
	defer st.Close()
	sum, err := (&dispatch.Dispatcher{File: f, Checkpointer: st, Jobs: 1}).Run(ctx)
	require.NoError(t, err)
	u := sum.Units[0]
	require.Equal(t, tasks.StatusDone, u.Status)
	require.Equal(t, 2, u.Attempts, "the blocking check failed once")
	require.Contains(t, u.Reason, "done with a warning")
	require.Contains(t, u.Reason, "style")

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var saved struct {
		Tasks []struct {
			ErrorHistory []string `json:"error_history"`
		} `json:"tasks"`
	}
	require.NoError(t, json.Unmarshal(b, &saved))
	hist := saved.Tasks[0].ErrorHistory
	require.Len(t, hist, 1)
	require.Contains(t, hist[0], "must: exit status 1")
	require.NotContains(t, hist[0], "style", "an advisory failure does not enter the history")
	require.NotContains(t, hist[0], "fyi")
}

// A task that asks for a review fails with a clear message when no model is
// configured, and runs the review (advisory) when one is.
func TestDispatcherReview(t *testing.T) {
	dir := t.TempDir()
	gitRepo(t, dir, map[string]string{
		"agent.sh": "#!/bin/sh\necho fixed > fixed\n",
		"tasks.json": `{"defaults": {"review": true}, "tasks": [{"id": 1, "title": "review me", "max_retries": 2,
  "executor": {"command": ["./agent.sh"]}, "test_cmd": ["test", "-f", "fixed"]}]}`,
	})
	path := filepath.Join(dir, "tasks.json")
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "runs.db"))
	require.NoError(t, err)
	defer st.Close()

	f, err := tasks.Load(path, "")
	require.NoError(t, err)
	sum, err := (&dispatch.Dispatcher{File: f, Checkpointer: st, Jobs: 1}).Run(ctx)
	require.NoError(t, err)
	require.Equal(t, tasks.StatusFailed, sum.Units[0].Status)
	require.Contains(t, sum.Units[0].Reason, `asks for a review ("review": true) but no model is configured`)

	srv := llmtest.NewServer(t,
		llmtest.Text(`{"summary": "s", "steps": ["a"], "files": [], "test_strategy": "t"}`, 10),
		llmtest.Text(`{"approve": false, "feedback": "the file name is odd"}`, 10))
	f, err = tasks.Load(path, "")
	require.NoError(t, err)
	require.NoError(t, f.SetStatus("1", tasks.StatusPending, ""))
	d := &dispatch.Dispatcher{File: f, Checkpointer: st, Jobs: 1,
		Model: llm.Config{BaseURL: srv.BaseURL(), Model: llmtest.Model, HTTPClient: srv.Client()}}
	sum, err = d.Run(ctx)
	require.NoError(t, err)
	require.Equal(t, tasks.StatusDone, sum.Units[0].Status, "%+v", sum.Units[0])
	require.Equal(t, "done with a warning: review: the file name is odd", sum.Units[0].Reason)
	require.Equal(t, 2, srv.Count(), "a plan and a review")
}
