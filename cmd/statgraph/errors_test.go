package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
	"github.com/statgraph/statgraph/mcpserver"
	"github.com/statgraph/statgraph/tasks"
	"github.com/statgraph/statgraph/web"
)

const errorsPlan = `{"tasks":[{"id":"1","title":"one","test_cmd":["true"]}]}`

// errorCase is one failing operation driven through the three front ends.
type errorCase struct {
	name string
	// setup makes the plan (and what makes the operation fail) and
	// returns its tasks file and run store ("" for the plan's).
	setup func(t *testing.T) (file, store string)
	// cli is the statgraph command line (the file is put in for "FILE",
	// the store for "STORE"); nil when the CLI has no such operation.
	cli []string
	// method, path and body are the web API's request.
	method, path, body string
	// tool and args are the MCP call.
	tool string
	args map[string]any
	// kind is what every front end must say; msg is a part of the
	// operation's message each must show as it is.
	kind control.Kind
	msg  string
}

// The CLI (exit code), the web API (HTTP status) and MCP (the tool error's
// text) map the same failing operation to the same kind, each showing the
// operation's message unchanged: one classification (control.Classify),
// three mappings.
func TestFrontEndsAgreeOnErrorKinds(t *testing.T) {
	plan := func(t *testing.T) (string, string) { return controltest.NewPlan(t, errorsPlan), "" }
	cases := []errorCase{
		{name: "unknown task", setup: plan,
			cli:    []string{"reset", "--file", "FILE", "9"},
			method: "POST", path: "/api/reset", body: `{"ids":["9"]}`,
			tool: "reset_failed", args: map[string]any{"ids": []string{"9"}},
			kind: control.KindNotFound, msg: `no such task "9" in `},
		{name: "task not failed", setup: plan,
			cli:    []string{"reset", "--file", "FILE", "1"},
			method: "POST", path: "/api/reset", body: `{"ids":["1"]}`,
			tool: "reset_failed", args: map[string]any{"ids": []string{"1"}},
			kind: control.KindConflict, msg: "only failed or blocked tasks can be reset: task 1 is pending"},
		{name: "run going on elsewhere", setup: func(t *testing.T) (string, string) {
			file := controltest.NewPlan(t, errorsPlan)
			lock, err := tasks.Lock(file)
			require.NoError(t, err)
			t.Cleanup(func() { lock.Unlock() })
			return file, ""
		},
			cli:    []string{"reset", "--file", "FILE", "1"},
			method: "POST", path: "/api/reset", body: `{"ids":["1"]}`,
			tool: "reset_failed", args: map[string]any{"ids": []string{"1"}},
			kind: control.KindConflict, msg: "a run of this plan is going on: another statgraph run (pid "},
		{name: "not a repository", setup: func(t *testing.T) (string, string) {
			t.Setenv("STATGRAPH_HOME", t.TempDir())
			file := filepath.Join(t.TempDir(), "tasks.json")
			require.NoError(t, os.WriteFile(file, []byte(errorsPlan), 0o644))
			return file, ""
		},
			cli:    []string{"run", "--no-sandbox", "FILE"},
			method: "POST", path: "/api/run", body: `{}`,
			tool: "run_pending", args: map[string]any{},
			kind: control.KindRefused, msg: "is not the top directory of a git repository"},
		{name: "run store unreadable", setup: func(t *testing.T) (string, string) {
			file := controltest.NewPlan(t, errorsPlan)
			store := filepath.Join(t.TempDir(), "runs.db")
			require.NoError(t, os.WriteFile(store, bytes.Repeat([]byte("not a database "), 512), 0o644))
			return file, store
		},
			cli:    []string{"history", "--file", "FILE", "--store", "STORE", "1"},
			method: "GET", path: "/api/tasks/1",
			tool: "history", args: map[string]any{"id": "1"},
			kind: control.KindInternal, msg: "runs.db"},
		{name: "refused task", setup: plan,
			method: "POST", path: "/api/tasks", body: `{"id":"2","title":"two","bogus":1}`,
			tool: "add_task", args: map[string]any{"task": map[string]any{"id": "2", "title": "two", "bogus": 1}},
			kind: control.KindInvalid, msg: `the new task is refused; nothing was written: task: unknown field "bogus"`},
		{name: "task too large", setup: plan,
			method: "POST", path: "/api/tasks", body: `{"id":"2","title":"two","details":"` + strings.Repeat("x", tasks.MaxNewTaskBytes) + `"}`,
			tool: "add_task", args: map[string]any{"task": map[string]any{"id": "2", "title": "two", "details": strings.Repeat("x", tasks.MaxNewTaskBytes)}},
			kind: control.KindTooLarge, msg: "bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file, store := tc.setup(t)
			if tc.cli != nil {
				code, stderr := cliRun(t, tc.cli, file, store)
				assert.Equal(t, kindMaps[tc.kind].exit, code, "CLI exit code; stderr:\n%s", stderr)
				assert.Contains(t, stderr, tc.msg, "CLI")
			}
			ctl, err := control.Open(control.Options{File: file, Store: store})
			require.NoError(t, err)
			defer ctl.Close()

			status, body := webDo(t, ctl, tc.method, tc.path, tc.body)
			assert.Equal(t, kindMaps[tc.kind].status, status, "web API status; body:\n%.2000s", body)
			assert.Contains(t, body, tc.msg, "web API")

			text := mcpError(t, ctl, tc.tool, tc.args)
			assert.True(t, strings.HasSuffix(text, "(kind: "+tc.kind.String()+")"), "MCP tool text names the kind %q:\n%.2000s", tc.kind, text)
			assert.Contains(t, text, tc.msg, "MCP")
		})
	}
}

// kindMaps is what each kind maps to, as the CLI's usage and the web
// API's documentation say: the exit code and the HTTP status.
var kindMaps = map[control.Kind]struct{ exit, status int }{
	control.KindInternal: {exitFailed, http.StatusInternalServerError},
	control.KindInvalid:  {exitUsage, http.StatusBadRequest},
	control.KindRefused:  {exitUsage, http.StatusUnprocessableEntity},
	control.KindTooLarge: {exitUsage, http.StatusRequestEntityTooLarge},
	control.KindNotFound: {exitUsage, http.StatusNotFound},
	control.KindConflict: {exitUsage, http.StatusConflict},
	control.KindCanceled: {exitInterrupted, http.StatusServiceUnavailable},
}

// cliRun runs the statgraph command line args, with FILE and STORE
// replaced, and returns its exit code and stderr.
func cliRun(t *testing.T, args []string, file, store string) (int, string) {
	t.Helper()
	args = append([]string(nil), args...)
	for i, a := range args {
		switch a {
		case "FILE":
			args[i] = file
		case "STORE":
			args[i] = store
		}
	}
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code := run(ctx, args, &stdout, &stderr)
	return code, stderr.String()
}

// webDo sends one request to ctl's web API (no token, loopback) and
// returns the status and body.
func webDo(t *testing.T, ctl *control.Control, method, path, body string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Host = "127.0.0.1"
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	web.Handler(ctl, "").ServeHTTP(w, req)
	var e web.ErrorResponse
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &e), "%s %s: %s", method, path, w.Body)
	return w.Code, e.Error
}

// mcpError calls tool on an MCP server of ctl, requires a tool error and
// returns its text.
func mcpError(t *testing.T, ctl *control.Control, tool string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- mcpserver.New(ctl, "test").Run(ctx, st) }()
	defer func() {
		cancel()
		<-done
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err, tool)
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	require.True(t, res.IsError, "%s succeeded: %s", tool, text)
	return text
}
