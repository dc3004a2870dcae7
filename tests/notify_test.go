package tests

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// notifyTasks is one task that passes and one that never does and asks
// (on_exhausted "ask"): without a terminal, the question is left for
// later and the task ends interrupted.
const notifyTasks = `{"tasks": [
  {"id": 1, "title": "passes", "executor": {"command": ["sh", "-c", "echo ok > out.txt"]}, "test_cmd": "test -f out.txt"},
  {"id": 2, "title": "never passes", "max_retries": 1, "on_exhausted": "ask",
   "executor": {"command": ["sh", "-c", "echo no > out.txt"]}, "test_cmd": "echo still failing; false"}
]}
`

// notification is the part of a notification the tests read.
type notification struct {
	Event  string         `json:"event"`
	Text   string         `json:"text"`
	Plan   string         `json:"plan"`
	Task   string         `json:"task"`
	Reason string         `json:"reason"`
	Counts map[string]int `json:"counts"`
	Spend  *struct {
		Tokens int `json:"tokens"`
	} `json:"spend"`
}

// listener is a local HTTP server collecting the notifications POSTed to it.
type listener struct {
	*httptest.Server
	mu  sync.Mutex // guards got
	got []notification
}

func newListener(t *testing.T, status int) *listener {
	l := &listener{}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var n notification
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(data, &n) != nil {
			t.Errorf("notification: %s %s %q: want a POST of JSON", r.Method, r.Header.Get("Content-Type"), data)
		}
		l.mu.Lock()
		l.got = append(l.got, n)
		l.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(l.Close)
	return l
}

func (l *listener) events() map[string]notification {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]notification{}
	for _, n := range l.got {
		out[n.Event] = n
	}
	return out
}

// checkNotified checks the question and end notifications of a run of
// notifyTasks.
func checkNotified(t *testing.T, got map[string]notification) {
	t.Helper()
	q, ok := got["question"]
	require.True(t, ok, "a question notification: %+v", got)
	assert.Equal(t, "2", q.Task)
	assert.Contains(t, q.Text, "task 2 (never passes)")
	assert.Contains(t, q.Text, "retry, skip or abort")
	assert.Contains(t, q.Reason, "still failing")
	end, ok := got["end"]
	require.True(t, ok, "an end notification: %+v", got)
	assert.Equal(t, map[string]int{"done": 1, "interrupted": 1}, end.Counts)
	assert.Contains(t, end.Text, "1 done, 1 interrupted")
	require.NotNil(t, end.Spend)
	assert.True(t, strings.HasSuffix(end.Plan, "tasks.json"), end.Plan)
}

// --notify URL POSTs a JSON summary with a Slack-compatible text when a
// task asks a question and when the run ends; defaults.notify in
// tasks.json does the same without the flag.
func TestNotifyURL(t *testing.T) {
	t.Parallel()
	l := newListener(t, http.StatusOK)
	dir := newRepo(t, map[string]string{"tasks.json": notifyTasks})
	r := statgraph(t, dir, "run", noSandbox, "--notify", l.URL+"/hooks/secret-path", "tasks.json")
	require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	checkNotified(t, l.events())
	assert.NotContains(t, r.stderr, "not delivered")

	l2 := newListener(t, http.StatusNoContent)
	withDefault := strings.Replace(notifyTasks, `{"tasks": [`, `{"defaults": {"notify": "`+l2.URL+`"}, "tasks": [`, 1)
	dir = newRepo(t, map[string]string{"tasks.json": withDefault})
	r = statgraph(t, dir, "run", noSandbox, "tasks.json")
	require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	checkNotified(t, l2.events())
}

// --notify-cmd runs a command for each notification with the JSON on its
// standard input.
func TestNotifyCmd(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "notes")
	dir := newRepo(t, map[string]string{"tasks.json": notifyTasks})
	r := statgraph(t, dir, "run", noSandbox, "--notify-cmd", "cat >> '"+out+"'; echo >> '"+out+"'", "tasks.json")
	require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	got := map[string]notification{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var n notification
		require.NoError(t, json.Unmarshal([]byte(line), &n), line)
		got[n.Event] = n
	}
	checkNotified(t, got)
}

// A notification that fails (a refused connection, a 500, a command that
// exits non-zero, one that hangs past 10 s is bounded the same way) is
// written once to stderr and never fails the run: the exit code and
// tasks.json are the run's own, and the webhook's secret path is not
// printed.
func TestNotifyFailureDoesNotFailTheRun(t *testing.T) {
	t.Parallel()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := "http://" + closed.Addr().String() + "/hooks/secret-path"
	closed.Close()
	failing := newListener(t, http.StatusInternalServerError)
	for _, flags := range [][]string{
		{"--notify", refused},
		{"--notify", failing.URL + "/hooks/secret-path"},
		{"--notify-cmd", "exit 3"},
	} {
		dir := newRepo(t, map[string]string{"tasks.json": notifyTasks})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd, stdout, stderr := command(ctx, dir, append(append([]string{"run", noSandbox}, flags...), "tasks.json")...)
		require.NoError(t, cmd.Start())
		r := wait(t, cmd.Wait(), stdout, stderr)
		cancel()
		assert.Equal(t, 1, r.code, "%v: the run's own exit code (a task is interrupted)\nstderr:\n%s", flags, r.stderr)
		assert.Equal(t, 2, strings.Count(r.stderr, "notification was not delivered"), "%v: once per notification:\n%s", flags, r.stderr)
		assert.NotContains(t, r.stderr, "secret-path", flags)
		got := readTasks(t, filepath.Join(dir, "tasks.json"))
		assert.Equal(t, "done", got["1"].Status, flags)
		assert.Equal(t, "interrupted", got["2"].Status, flags)
	}
}
