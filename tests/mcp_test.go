package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mcpSession starts `statgraph mcp args...` in dir and connects the MCP
// SDK's client to its stdin and stdout. Closing the session closes stdin
// and returns the process's exit error.
func mcpSession(t *testing.T, dir string, args ...string) (*mcp.ClientSession, *lockedBuffer) {
	t.Helper()
	return mcpSessionEnv(t, dir, nil, args...)
}

// mcpSessionEnv is mcpSession with the variables env added to the
// process's environment.
func mcpSessionEnv(t *testing.T, dir string, env []string, args ...string) (*mcp.ClientSession, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(childEnv(), env...)
	var stderr lockedBuffer // written by exec's copying goroutine while the test reads it
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "v0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 20 * time.Second}, nil)
	require.NoError(t, err, "stderr:\n%s", stderr.String())
	return cs, &stderr
}

// lockedBuffer is a bytes.Buffer safe to read while a process writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// mcpCall calls tool and decodes its structured result into out, failing
// the test on a protocol or tool error.
func mcpCall(t *testing.T, cs *mcp.ClientSession, tool string, args, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err, tool)
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	require.False(t, res.IsError, "%s: %s", tool, text)
	data, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, out), "%s: %s", tool, data)
}

type mcpStatus struct {
	Counts map[string]int `json:"counts"`
	Run    struct {
		Running bool `json:"running"`
	} `json:"run"`
	Running []struct {
		ID string `json:"id"`
	} `json:"running"`
}

// The built binary serves MCP on its stdin and stdout: the SDK's client
// adds a task, starts a run of the pending tasks, watches it end through
// status, and the process exits 0 when the client disconnects. A second
// session started while a run is going on is stopped by disconnecting: the
// running task is left interrupted in tasks.json, to continue later.
func TestMCPServerProcess(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"tasks.json": `{"tasks": [
  {"id": 1, "title": "one", "executor": {"command": ["sh", "-c", "echo one > one.txt"]}, "test_cmd": "test -f one.txt"}
]}
`})
	file := filepath.Join(repo, "tasks.json")
	cs, stderr := mcpSession(t, repo, file)
	var list struct {
		Tasks []struct{ ID, Status string } `json:"tasks"`
	}
	mcpCall(t, cs, "list_tasks", nil, &list)
	require.Len(t, list.Tasks, 1)
	var added struct{ ID string }
	mcpCall(t, cs, "add_task", map[string]any{"task": map[string]any{"title": "two", "dependencies": []int{1},
		"executor": map[string]any{"command": []string{"sh", "-c", "echo two > two.txt"}}, "test_cmd": "test -f two.txt"}}, &added)
	assert.Equal(t, "2", added.ID)
	var run struct{ Running bool }
	mcpCall(t, cs, "run_pending", nil, &run)
	assert.True(t, run.Running)
	st := mcpWaitRun(t, cs)
	assert.Equal(t, map[string]int{"done": 2}, st.Counts, "stderr:\n%s", stderr)
	require.NoError(t, cs.Close(), "the server exits 0 when the client disconnects; stderr:\n%s", stderr)
	assert.Equal(t, "done", readTasks(t, file)["2"].Status)

	// Disconnecting stops a run that is going on.
	repo = newRepo(t, map[string]string{"tasks.json": `{"tasks": [
  {"id": 1, "title": "slow", "executor": {"command": ["sleep", "60"]}, "test_cmd": "true"}
]}
`})
	file = filepath.Join(repo, "tasks.json")
	cs, stderr = mcpSession(t, repo, file)
	mcpCall(t, cs, "run_pending", nil, &run)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		st = mcpStatus{}
		mcpCall(t, cs, "status", nil, &st)
		if len(st.Running) == 1 || time.Now().After(deadline) {
			break
		}
	}
	require.Len(t, st.Running, 1, "task 1 is running")
	start := time.Now()
	require.NoError(t, cs.Close(), "stderr:\n%s", stderr)
	assert.Less(t, time.Since(start), 15*time.Second, "the run stops at once, not after the 60 s command")
	task := readTasks(t, file)["1"]
	assert.Equal(t, "interrupted", task.Status, "stderr:\n%s", stderr)
}

// statgraph mcp refuses a plan it cannot serve before speaking the
// protocol: exit 2, the reason on stderr (as run gives it), and nothing on
// stdout, which belongs to the protocol.
func TestMCPRefusesABadPlan(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"tasks.json": `{"tasks": [{"id": 1, "title": "a", "dependencies": [null]}]}`})
	for file, want := range map[string]string{"nope.json": "no such file", "tasks.json": "dependencies[0] is null"} {
		r := statgraph(t, repo, "mcp", file)
		assert.Equal(t, 2, r.code, "%s: stderr:\n%s", file, r.stderr)
		assert.Contains(t, r.stderr, want)
		assert.Empty(t, r.stdout)
	}
}

// mcpWaitRun polls the status tool until the run started through the
// session ends (or 90 s pass) and returns the last status.
func mcpWaitRun(t *testing.T, cs *mcp.ClientSession) mcpStatus {
	t.Helper()
	var st mcpStatus
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		st = mcpStatus{}
		mcpCall(t, cs, "status", nil, &st)
		if !st.Run.Running || time.Now().After(deadline) {
			return st
		}
	}
}
