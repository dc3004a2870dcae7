//go:build scale

package tests

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
	"github.com/statgraph/statgraph/internal/pgtest"
)

// statgraph review on a plan run on workers: it reads the task's state
// from the workers' checkpoints in the queue's Postgres and writes the
// comments there (it said "no recorded run" before, reading only the
// local run store), and the next run on the queue makes the new attempt
// on a worker, with the comment in the agent's prompt, from the task's
// branch.
func TestQueueReview(t *testing.T) {
	db := pgtest.Database(t)
	agent := `if grep -q 'say why' "$1"; then echo reviewed > r.txt; else echo first > w.txt; fi`
	repo := newRepo(t, map[string]string{"tasks.json": `{"tasks": [{"id": 1, "title": "one",
  "executor": {"command": ["sh", "-c", ` + jsonString(t, agent) + `, "agent", "{prompt_file}"]}, "test_cmd": "test -f w.txt"}]}
`})
	remote := filepath.Join(t.TempDir(), "remote.git")
	gittest.Git(t, "", "clone", "-q", "--bare", repo, remote)
	s := queueSetup{repo: repo, remote: remote, db: db}
	startWorker(t, s, "60s", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, waitRun := s.coordinator(ctx, t)
	r := waitRun()
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)

	cmd, stdout, stderr := command(ctx, repo, "review", "--queue", db, "--comment", "w.txt:1:say why", "1")
	r = wait(t, cmd.Run(), stdout, stderr)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, "task 1 sent back with 1 comment(s)")
	require.Equal(t, "pending", readTasks(t, filepath.Join(repo, "tasks.json"))["1"].Status)

	_, waitRun = s.coordinator(ctx, t)
	r = waitRun()
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Equal(t, "done", readTasks(t, filepath.Join(repo, "tasks.json"))["1"].Status)
	branch := planOf(t, repo, "tasks.json", "").Branch("1")
	require.Equal(t, "reviewed", gittest.Git(t, remote, "show", branch+":r.txt"), "the new attempt read the comment")
	require.Equal(t, "first", gittest.Git(t, remote, "show", branch+":w.txt"), "it started from the task's branch")

	h := statgraph(t, repo, "history", "--json", "--queue", db, "1")
	require.Equal(t, 0, h.code, "stdout:\n%s\nstderr:\n%s", h.stdout, h.stderr)
	var hist struct {
		Attempts []struct {
			Feedback string `json:"feedback"`
			Passed   bool   `json:"passed"`
		} `json:"attempts"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.stdout), &hist), h.stdout)
	require.Len(t, hist.Attempts, 2)
	require.Contains(t, hist.Attempts[0].Feedback, "w.txt:1: say why")
	require.True(t, hist.Attempts[1].Passed)
}

// jsonString is s as a JSON string.
func jsonString(t *testing.T, s string) string {
	data, err := json.Marshal(s)
	require.NoError(t, err)
	return string(data)
}
