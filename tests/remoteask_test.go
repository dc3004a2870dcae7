package tests

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/control"
)

// TestTerminalRunAnsweredThroughControl runs the real binary with a task
// that escalates (on_exhausted "ask", checks that always fail) and
// --wait-for-answers, without a terminal: its question shows through
// control (as statgraph serve and mcp read it), the answer "skip" given
// there reaches the run, which ends the task done; a second answer is
// refused.
func TestTerminalRunAnsweredThroughControl(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"tasks.json": `{"tasks": [
  {"id": 1, "title": "never passes", "max_retries": 1, "on_exhausted": "ask",
   "executor": {"command": ["true"]}, "test_cmd": "false"}
]}
`})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, stdout, stderr := command(ctx, repo, "run", "--wait-for-answers", "tasks.json")
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	c, err := control.Open(control.Options{File: filepath.Join(repo, "tasks.json"), StoreOnly: true})
	require.NoError(t, err)
	defer c.Close()
	var q control.Question
	for q.Task == "" {
		select {
		case err := <-exited:
			t.Fatalf("the run ended without asking: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
		case <-time.After(100 * time.Millisecond):
		}
		q = c.Questions()["1"]
	}
	assert.Equal(t, "never passes", q.Title)
	assert.Equal(t, []string{control.AnswerRetry, control.AnswerSkip, control.AnswerAbort}, q.Choices)
	ts, err := c.Tasks(ctx)
	require.NoError(t, err)
	require.NotNil(t, ts[0].Question, "the board shows the question")

	require.NoError(t, c.Answer("1", control.AnswerSkip))
	require.ErrorIs(t, c.Answer("1", control.AnswerAbort), control.ErrNoQuestion, "the first answer wins")
	select {
	case err := <-exited:
		r := wait(t, err, stdout, stderr)
		require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	case <-ctx.Done():
		t.Fatalf("the run did not end after the answer\nstderr:\n%s", stderr)
	}
	task := readTasks(t, filepath.Join(repo, "tasks.json"))["1"]
	assert.Equal(t, "done", task.Status, "skip marks the task done")
	assert.Empty(t, c.Questions(), "the question is gone")
}
