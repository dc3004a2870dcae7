package web_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
	"github.com/statgraph/statgraph/web"
)

const twoTasks = `{"tasks": [{"id": 1, "title": "one"}, {"id": 2, "title": "two", "dependencies": [1]}]}`

// do sends a request to h as if from host, with an optional JSON body.
func do(h http.Handler, method, target, host, body string, hdr ...string) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r := httptest.NewRequest(method, target, rd)
	r.Host = host
	if method == http.MethodPost {
		r.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// With a token, on a loopback Host as on any other, a request without it,
// or with a wrong one, is refused: page, API and event stream alike. The
// header and the cookie are accepted; the token in the page's query sets
// the cookie (HttpOnly, SameSite=Strict) and redirects to the page without
// it, and is not accepted on the API.
func TestTokenRequired(t *testing.T) {
	c := newControl(t, twoTasks, llm.Config{})
	h := web.Handler(c, "s3cret-token")
	for _, host := range []string{"127.0.0.1:7777", "localhost:7777", "10.0.0.5:7777"} {
		for _, hdr := range [][]string{nil, {"Authorization", "Bearer wrong"}, {"Authorization", "s3cret-token"}, {"Cookie", "statgraph_token=nope"}} {
			w := do(h, "GET", "/api/tasks", host, "", hdr...)
			require.Equal(t, http.StatusUnauthorized, w.Code, "%s %v", host, hdr)
			require.NotContains(t, w.Body.String(), `"title"`)
		}
		for _, target := range []string{"/", "/app.js", "/api/events", "/api/graph.svg", "/api/tasks/1", "/api/tasks?token=s3cret-token", "/?token=wrong"} {
			require.Equal(t, http.StatusUnauthorized, do(h, "GET", target, host, "").Code, "%s %s", host, target)
		}
		for _, target := range []string{"/api/run", "/api/stop", "/api/reset", "/api/tasks", "/api/tasks/1/answer"} {
			require.Equal(t, http.StatusUnauthorized, do(h, "POST", target, host, "{}").Code, "%s %s", host, target)
		}
	}
	const host = "127.0.0.1:7777"
	require.Equal(t, http.StatusOK, do(h, "GET", "/api/tasks", host, "", "Authorization", "Bearer s3cret-token").Code)
	w := do(h, "GET", "/?token=s3cret-token", host, "")
	require.Equal(t, http.StatusSeeOther, w.Code)
	require.Equal(t, "/", w.Header().Get("Location"), "the token leaves the address bar")
	ck := w.Result().Cookies()
	require.Len(t, ck, 1)
	require.True(t, ck[0].HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, ck[0].SameSite)
	require.Equal(t, http.StatusOK, do(h, "GET", "/api/tasks", host, "", "Cookie", "statgraph_token=s3cret-token").Code)
	require.Equal(t, http.StatusOK, do(h, "GET", "/", host, "", "Cookie", "statgraph_token=s3cret-token").Code)
	w = do(h, "GET", "//evil.example/?token=s3cret-token", host, "")
	require.Equal(t, "/evil.example", w.Header().Get("Location"), "the redirect stays on this server")
	require.Equal(t, "http://127.0.0.1:7777/?token=a+b%26c", web.LoginURL("http://127.0.0.1:7777", "a b&c"))
}

// Without a token only loopback Host names are served (DNS rebinding).
func TestNoTokenServesLoopbackOnly(t *testing.T) {
	c := newControl(t, twoTasks, llm.Config{})
	h := web.Handler(c, "")
	for _, host := range []string{"127.0.0.1:7777", "localhost:7777", "[::1]:7777", "127.0.0.1"} {
		require.Equal(t, http.StatusOK, do(h, "GET", "/api/tasks", host, "").Code, host)
	}
	for _, host := range []string{"evil.example:7777", "10.0.0.5:7777", "localhost.evil.example"} {
		require.Equal(t, http.StatusForbidden, do(h, "GET", "/api/tasks", host, "").Code, host)
	}
	require.True(t, web.IsLoopback("127.0.0.1:7777"))
	require.True(t, web.IsLoopback("[::1]:0"))
	require.False(t, web.IsLoopback(":7777"))
	require.False(t, web.IsLoopback("0.0.0.0:7777"))
}

// Hostile input is refused: path tricks in ids, huge and unknown bodies,
// wrong methods and content types, posts from another origin.
func TestHostileInputRefused(t *testing.T) {
	c := newControl(t, twoTasks, llm.Config{})
	before, err := os.ReadFile(c.File())
	require.NoError(t, err)
	h := web.Handler(c, "")
	const host = "127.0.0.1:7777"
	for _, target := range []string{
		"/api/tasks/%2e%2e", "/api/tasks/..%2f..%2fetc%2fpasswd", "/api/tasks/a%00b", "/api/tasks/-1",
		"/api/tasks/1.lock", "/api/tasks/" + strings.Repeat("9", 101), "/api/tasks/%2e%2e/diff",
	} {
		w := do(h, "GET", target, host, "")
		require.Equal(t, http.StatusBadRequest, w.Code, "%s: %s", target, w.Body)
		require.Contains(t, w.Body.String(), "task id")
	}
	w := do(h, "GET", "/api/tasks/../../etc/passwd", host, "")
	require.NotEqual(t, http.StatusOK, w.Code)
	require.NotContains(t, w.Body.String(), "root:")

	w = do(h, "POST", "/api/tasks", host, `{"title": "`+strings.Repeat("x", 2<<20)+`"}`)
	require.Equal(t, http.StatusRequestEntityTooLarge, w.Code, w.Body.String())
	w = do(h, "POST", "/api/run", host, `{"retry_failed": true, "extra": 1}`)
	require.Equal(t, http.StatusBadRequest, w.Code)
	require.Contains(t, w.Body.String(), "unknown field")
	w = do(h, "POST", "/api/reset", host, `{"ids": ["../x"]}`)
	require.Equal(t, http.StatusBadRequest, w.Code)
	w = do(h, "POST", "/api/tasks/1/answer", host, `{"answer": "retry"} {"answer": "skip"}`)
	require.Equal(t, http.StatusBadRequest, w.Code)
	w = do(h, "POST", "/api/tasks/1/answer", host, `{"answer": "maybe"}`)
	require.Equal(t, http.StatusBadRequest, w.Code)
	w = do(h, "POST", "/api/tasks/1/answer", host, `{"answer": "retry"}`)
	require.Equal(t, http.StatusConflict, w.Code, "no pending question")

	require.Equal(t, http.StatusMethodNotAllowed, do(h, "DELETE", "/api/tasks", host, "").Code)
	require.Equal(t, http.StatusMethodNotAllowed, do(h, "GET", "/api/stop", host, "").Code)
	require.Equal(t, http.StatusMethodNotAllowed, do(h, "PUT", "/api/run", host, "{}").Code)
	require.Equal(t, http.StatusNotFound, do(h, "GET", "/api/nothing", host, "").Code)

	r := httptest.NewRequest("POST", "/api/tasks", strings.NewReader(`{"title": "form"}`))
	r.Host = host
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rw := httptest.NewRecorder()
	h.ServeHTTP(rw, r)
	require.Equal(t, http.StatusUnsupportedMediaType, rw.Code)
	w = do(h, "POST", "/api/tasks", host, `{"title": "x"}`, "Origin", "http://evil.example")
	require.Equal(t, http.StatusForbidden, w.Code)

	after, _ := os.ReadFile(c.File())
	require.Equal(t, string(before), string(after), "nothing was written")
}

// Adding a task: a valid one is written and listed; an invalid one gets
// 422 with the problems and changes nothing.
func TestAddTaskAPI(t *testing.T) {
	c := newControl(t, twoTasks, llm.Config{})
	h := web.Handler(c, "")
	const host = "localhost:7777"
	w := do(h, "POST", "/api/tasks", host, `{"title": "bad", "dependencies": [42]}`)
	require.Equal(t, http.StatusUnprocessableEntity, w.Code, w.Body.String())
	var e web.ErrorResponse
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &e))
	require.NotEmpty(t, e.Problems)
	require.Contains(t, e.Problems[0].Message, "42")
	w = do(h, "POST", "/api/tasks", host, `[1]`)
	require.Equal(t, http.StatusBadRequest, w.Code)
	// The caps and field checks MCP's add_task shares (control.AddTask).
	w = do(h, "POST", "/api/tasks", host, `{"title": "x", "tset_cmd": ["go", "test"]}`)
	require.Equal(t, http.StatusBadRequest, w.Code, w.Body.String())
	require.Contains(t, w.Body.String(), `unknown field \"tset_cmd\"`)
	w = do(h, "POST", "/api/tasks", host, `{"title": "`+strings.Repeat("x", 2<<10)+`"}`)
	require.Equal(t, http.StatusRequestEntityTooLarge, w.Code, w.Body.String())
	w = do(h, "POST", "/api/tasks", host, `{"title": "x", "executor": {"command": ["agent"], "env": ["*"]}}`)
	require.Equal(t, http.StatusBadRequest, w.Code, w.Body.String())

	w = do(h, "POST", "/api/tasks", host, `{"title": "three", "dependencies": [2]}`)
	require.Equal(t, http.StatusCreated, w.Code, w.Body.String())
	require.JSONEq(t, `{"id": "3"}`, w.Body.String())
	w = do(h, "GET", "/api/tasks", host, "")
	var tr web.TasksResponse
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &tr))
	require.Len(t, tr.Tasks, 3)
	require.Equal(t, []string{"2"}, tr.Tasks[2].Dependencies)
	require.False(t, tr.Run.Running)
}

// The page, its assets and the graph drawing are served with a strict
// content security policy.
func TestPageAndGraph(t *testing.T) {
	c := newControl(t, twoTasks, llm.Config{})
	h := web.Handler(c, "")
	w := do(h, "GET", "/", "127.0.0.1:7777", "")
	require.Equal(t, http.StatusOK, w.Code)
	require.Contains(t, w.Body.String(), `<script src="app.js"`)
	require.Contains(t, w.Header().Get("Content-Security-Policy"), "script-src 'self'")
	w = do(h, "GET", "/app.js", "127.0.0.1:7777", "")
	require.Equal(t, http.StatusOK, w.Code)
	require.NotContains(t, w.Body.String(), "innerHTML")
	w = do(h, "GET", "/api/graph.svg", "127.0.0.1:7777", "")
	require.Equal(t, "image/svg+xml", w.Header().Get("Content-Type"))
	require.Contains(t, w.Body.String(), `id="sg-node-executor"`)
}

// sse reads Server-Sent Events from a live server.
type sse struct{ sc *bufio.Scanner }

func (s *sse) next(t *testing.T) (kind string, ev control.Event) {
	t.Helper()
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			kind = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev))
		case line == "" && kind != "":
			return kind, ev
		}
	}
	t.Fatalf("event stream ended: %v", s.sc.Err())
	return "", ev
}

// A whole run through the API: start, the events stream shows task 1
// running, its escalation answered with "retry" resumes it, both tasks end
// done, and the task's attempts and diff are readable; a second start
// while it runs is refused with 409.
func TestRunThroughAPI(t *testing.T) {
	c := newControl(t, controltest.AskPlan, controltest.NewModel(t).Config())
	const token = "run-through-api-token"
	srv := httptest.NewServer(web.Handler(c, token))
	defer srv.Close()
	send := func(method, path, body, auth string) *http.Response {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, srv.URL+path, rd)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	post := func(path, body string) *http.Response { return send("POST", path, body, token) }
	get := func(path string) (*http.Response, error) { return send("GET", path, "", token), nil }
	require.Equal(t, http.StatusUnauthorized, send("GET", "/api/events", "", "").StatusCode)
	res, err := get("/api/events")
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
	ev := &sse{bufio.NewScanner(res.Body)}
	kind, _ := ev.next(t)
	require.Equal(t, "resync", kind, "the first event says to read the tasks")

	require.Equal(t, http.StatusAccepted, post("/api/run", `{}`).StatusCode)
	require.Equal(t, http.StatusConflict, post("/api/run", `{}`).StatusCode)
	deadline := time.Now().Add(90 * time.Second)
	sawRunning := false
	for {
		require.True(t, time.Now().Before(deadline), "no question for task 1")
		kind, e := ev.next(t)
		if kind == "task" && e.Unit == "1" && e.Task.Status == "in-progress" {
			sawRunning = true
		}
		if kind == "question" && e.Unit == "1" {
			break
		}
	}
	require.True(t, sawRunning)
	// What a check on this machine could send: without the token, the
	// answer is refused and the task still waits for one.
	require.Equal(t, http.StatusUnauthorized, send("POST", "/api/tasks/1/answer", `{"answer": "skip"}`, "").StatusCode)
	require.Equal(t, http.StatusUnauthorized, send("POST", "/api/stop", `{}`, "").StatusCode)
	require.True(t, c.Run().Running, "the run goes on")
	require.Equal(t, http.StatusOK, post("/api/tasks/1/answer", `{"answer": "retry"}`).StatusCode)
	for {
		require.True(t, time.Now().Before(deadline), "task 2 never done")
		kind, e := ev.next(t)
		if kind == "task" && e.Unit == "2" && e.Task.Status == "done" {
			break
		}
	}
	require.NoError(t, c.Wait(t.Context()))
	r, err := get("/api/tasks/1")
	require.NoError(t, err)
	defer r.Body.Close()
	var h control.History
	require.NoError(t, json.NewDecoder(r.Body).Decode(&h))
	require.Len(t, h.Attempts, 2)
	require.NotEmpty(t, h.Attempts[0].Feedback)
	require.Contains(t, h.Attempts[0].Log, "→ finish", "the agent's log tail")
	require.Contains(t, h.Attempts[1].Diff, "+fixed")
	r2, err := get("/api/tasks/1/diff")
	require.NoError(t, err)
	defer r2.Body.Close()
	var d web.DiffResponse
	require.NoError(t, json.NewDecoder(r2.Body).Decode(&d))
	require.Contains(t, d.Diff, "+fixed")
	require.Contains(t, d.Branch, "/1")
	require.Equal(t, http.StatusConflict, post("/api/stop", `{}`).StatusCode, "no run to stop")
}
