package web_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/tasks"
	"github.com/statgraph/statgraph/web"
)

// getJSON decodes the answer of GET url into out, requiring 200.
func getJSON(t *testing.T, url string, out any) {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, url)
	require.NoError(t, json.NewDecoder(res.Body).Decode(out))
}

// postJSON posts body to url and returns the status and the decoded
// answer.
func postJSON(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer res.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
	return res.StatusCode, out
}

// statusIn returns task id's status in the tasks file as saved.
func statusIn(t *testing.T, file, id string) string {
	t.Helper()
	f, err := tasks.Load(file, "")
	require.NoError(t, err)
	task, ok := f.Task(id)
	require.True(t, ok, id)
	return task.Status
}

// POST /api/stop stops the run started here as Ctrl-C does: the running
// task is left interrupted in the tasks file, at once (not after its 60 s
// command), and GET /api/run says the run ended.
func TestStopThroughAPI(t *testing.T) {
	c := newControl(t, `{"tasks": [{"id": 1, "title": "slow", "executor": {"command": ["sleep", "60"]}, "test_cmd": "true"}]}`, llm.Config{})
	srv := httptest.NewServer(web.Handler(c, ""))
	defer srv.Close()
	code, _ := postJSON(t, srv.URL+"/api/run", `{}`)
	require.Equal(t, http.StatusAccepted, code)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var tr web.TasksResponse
		getJSON(t, srv.URL+"/api/tasks", &tr)
		if tr.Tasks[0].Status == tasks.StatusInProgress && tr.Tasks[0].Phase != "" {
			break
		}
		require.True(t, time.Now().Before(deadline), "task 1 never ran: %+v", tr.Tasks[0])
	}
	var run control.RunInfo
	getJSON(t, srv.URL+"/api/run", &run)
	require.True(t, run.Running)

	start := time.Now()
	code, body := postJSON(t, srv.URL+"/api/stop", `{}`)
	require.Equal(t, http.StatusAccepted, code, "%v", body)
	require.Equal(t, true, body["stopping"])
	require.NoError(t, c.Wait(t.Context()))
	require.Less(t, time.Since(start), 30*time.Second, "stopped at once, not after the command")
	getJSON(t, srv.URL+"/api/run", &run)
	require.False(t, run.Running)
	require.Len(t, run.Units, 1)
	require.Equal(t, tasks.StatusInterrupted, run.Units[0].Status)
	var raw map[string]any
	getJSON(t, srv.URL+"/api/run", &raw)
	unit := raw["units"].([]any)[0].(map[string]any)
	require.Equal(t, "1", unit["id"], "units use the lower-case names README gives: %v", unit)
	require.Equal(t, tasks.StatusInterrupted, unit["status"])
	require.Equal(t, tasks.StatusInterrupted, statusIn(t, c.File(), "1"), "saved in the tasks file")
	code, _ = postJSON(t, srv.URL+"/api/stop", `{}`)
	require.Equal(t, http.StatusConflict, code, "nothing left to stop")
}

// POST /api/reset sends the failed task named, and the task blocked only
// by it, back to pending in the tasks file; {} resets every failed or
// blocked task.
func TestResetThroughAPI(t *testing.T) {
	c := newControl(t, `{"tasks": [
  {"id": 1, "title": "one", "status": "failed", "status_reason": "broke", "retry_count": 3},
  {"id": 2, "title": "two", "dependencies": [1], "status": "blocked", "status_reason": "task 1 failed"},
  {"id": 3, "title": "three", "status": "failed", "status_reason": "broke too"}
]}`, llm.Config{})
	srv := httptest.NewServer(web.Handler(c, ""))
	defer srv.Close()

	code, body := postJSON(t, srv.URL+"/api/reset", `{"ids": ["1"]}`)
	require.Equal(t, http.StatusOK, code, "%v", body)
	require.ElementsMatch(t, []any{"1", "2"}, body["reset"])
	require.Equal(t, tasks.StatusPending, statusIn(t, c.File(), "1"))
	require.Equal(t, tasks.StatusPending, statusIn(t, c.File(), "2"))
	require.Equal(t, tasks.StatusFailed, statusIn(t, c.File(), "3"), "not named")
	var tr web.TasksResponse
	getJSON(t, srv.URL+"/api/tasks", &tr)
	require.Equal(t, tasks.StatusPending, tr.Tasks[0].Status)
	require.Equal(t, 0, tr.Tasks[0].Attempt, "the attempts start again")

	code, body = postJSON(t, srv.URL+"/api/reset", `{}`)
	require.Equal(t, http.StatusOK, code, "%v", body)
	require.Equal(t, []any{"3"}, body["reset"])
	require.Equal(t, tasks.StatusPending, statusIn(t, c.File(), "3"))

	code, _ = postJSON(t, srv.URL+"/api/reset", `{"ids": ["1"]}`)
	require.Equal(t, http.StatusConflict, code, "task 1 is no longer failed")
}
