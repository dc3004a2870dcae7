package tests

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/statgraph/gate"
	"github.com/statgraph/statgraph/web"
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
	assert.Equal(t, []string{string(gate.AnswerRetry), string(gate.AnswerSkip), string(gate.AnswerAbort)}, q.Choices)
	ts, err := c.Tasks(ctx)
	require.NoError(t, err)
	require.NotNil(t, ts[0].Question, "the board shows the question")

	require.NoError(t, c.Answer("1", gate.AnswerSkip))
	require.ErrorIs(t, c.Answer("1", gate.AnswerAbort), control.ErrNoQuestion, "the first answer wins")
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

// askingRun starts the real binary's run, with --wait-for-answers and no
// terminal, on a task that escalates (on_exhausted "ask", a check that
// always fails) and returns its repository and a function that waits for
// the run to end and requires exit 0 with the task done (the answer
// "skip" given).
func askingRun(ctx context.Context, t *testing.T) (repo string, exited <-chan error, ended func()) {
	t.Helper()
	repo = newRepo(t, map[string]string{"tasks.json": `{"tasks": [
  {"id": 1, "title": "never passes", "max_retries": 1, "on_exhausted": "ask",
   "executor": {"command": ["true"]}, "test_cmd": "false"}
]}
`})
	cmd, stdout, stderr := command(ctx, repo, "run", "--wait-for-answers", "tasks.json")
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return repo, done, func() {
		t.Helper()
		select {
		case err := <-done:
			r := wait(t, err, stdout, stderr)
			require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		case <-ctx.Done():
			t.Fatalf("the run did not end after the answer")
		}
		task := readTasks(t, filepath.Join(repo, "tasks.json"))["1"]
		assert.Equal(t, "done", task.Status, "skip marks the task done")
	}
}

// A terminal run's escalation (the question file it leaves, see
// TestTerminalRunAnsweredThroughControl) is shown and answered through
// statgraph serve's API: GET /api/tasks shows the question, POST
// /api/tasks/1/answer "skip" reaches the run, which ends the task done; a
// second answer gets 409.
func TestTerminalRunAnsweredThroughHTTP(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	repo, exited, ended := askingRun(ctx, t)
	c, err := control.Open(control.Options{File: filepath.Join(repo, "tasks.json"), StoreOnly: true})
	require.NoError(t, err)
	defer c.Close()
	srv := httptest.NewServer(web.Handler(c, ""))
	defer srv.Close()
	for {
		var tr web.TasksResponse
		res, err := http.Get(srv.URL + "/api/tasks")
		require.NoError(t, err)
		require.NoError(t, json.NewDecoder(res.Body).Decode(&tr))
		res.Body.Close()
		if len(tr.Tasks) == 1 && tr.Tasks[0].Question != nil {
			assert.Equal(t, "never passes", tr.Tasks[0].Question.Title)
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the run ended without asking: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
	answer := func() int {
		res, err := http.Post(srv.URL+"/api/tasks/1/answer", "application/json", strings.NewReader(`{"answer": "skip"}`))
		require.NoError(t, err)
		res.Body.Close()
		return res.StatusCode
	}
	require.Equal(t, http.StatusOK, answer())
	require.Equal(t, http.StatusConflict, answer(), "the first answer wins")
	ended()
}

// The same through statgraph mcp (the binary, the SDK's client): status
// lists the terminal run's question under waiting, answer_escalation
// "skip" reaches the run, and a second answer is a tool error.
func TestTerminalRunAnsweredThroughMCP(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	repo, exited, ended := askingRun(ctx, t)
	cs, stderr := mcpSession(t, repo, filepath.Join(repo, "tasks.json"))
	defer cs.Close()
	for {
		var st struct {
			Waiting []struct {
				ID       string            `json:"id"`
				Question *control.Question `json:"question"`
			} `json:"waiting"`
		}
		mcpCall(t, cs, "status", nil, &st)
		if len(st.Waiting) == 1 {
			require.Equal(t, "1", st.Waiting[0].ID)
			require.NotNil(t, st.Waiting[0].Question)
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the run ended without asking: %v\nmcp stderr:\n%s", err, stderr)
		case <-time.After(100 * time.Millisecond):
		}
	}
	var got struct{ ID, Answer string }
	mcpCall(t, cs, "answer_escalation", map[string]any{"id": "1", "answer": "skip"}, &got)
	assert.Equal(t, "skip", got.Answer)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "answer_escalation", Arguments: map[string]any{"id": "1", "answer": "abort"}})
	require.NoError(t, err)
	require.True(t, res.IsError, "the first answer wins")
	ended()
}
