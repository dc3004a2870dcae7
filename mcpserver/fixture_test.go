package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/llm/llmtest"
	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/mcpserver"
)

// askPlan: task 1 (the LLM executor, on_exhausted "ask", one attempt)
// fails its first attempt and passes the next; task 2 (an agent CLI)
// depends on it.
const askPlan = `{"tasks": [
  {"id": 1, "title": "write fixed", "max_retries": 1, "on_exhausted": "ask",
   "test_cmd": "grep -q fixed out.txt"},
  {"id": 2, "title": "after one", "dependencies": [1],
   "executor": {"command": ["sh", "-c", "echo two > two.txt"]}, "test_cmd": "test -f two.txt"}
]}
`

// model is the scripted model for askPlan: the first write_file writes
// "broken", every later one "fixed" (unless broken is set: then every
// one); hold delays each write.
type model struct {
	*llmtest.Server
	mu     sync.Mutex
	writes int
	hold   time.Duration
	broken bool
}

func newModel(t *testing.T, hold time.Duration, broken bool) *model {
	m := &model{Server: llmtest.NewServer(t), hold: hold, broken: broken}
	m.SetFallback(func(req openai.ChatCompletionRequest) llmtest.Reply {
		if len(req.Tools) == 0 {
			return llmtest.Text(`{"summary":"write out.txt","steps":["write it"],"files":["out.txt"],"test_strategy":"grep"}`, 7)
		}
		if req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleTool {
			return llmtest.ToolCalls(3, llmtest.Finish("wrote out.txt"))
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		m.writes++
		body := "fixed\n"
		if m.writes == 1 || m.broken {
			body = "broken\n"
		}
		r := llmtest.ToolCalls(11, llmtest.WriteFile("out.txt", body))
		r.Delay = m.hold
		return r
	})
	return m
}

func (m *model) config() llm.Config {
	return llm.Config{BaseURL: m.BaseURL(), Model: llmtest.Model, HTTPClient: m.Client()}
}

// newPlan makes a git repository holding tasksJSON as tasks.json, with a
// fresh STATGRAPH_HOME, and returns the tasks file's path.
func newPlan(t testing.TB, tasksJSON string) string {
	t.Helper()
	t.Setenv("STATGRAPH_HOME", t.TempDir())
	dir := t.TempDir()
	files := map[string]string{"tasks.json": tasksJSON, "README": "x\n"}
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	return filepath.Join(dir, "tasks.json")
}

// connect opens a Control on o and returns an SDK client session talking
// to the server over an in-memory pipe; both end with the test.
func connect(t *testing.T, o control.Options) *mcp.ClientSession {
	t.Helper()
	ctl, err := control.Open(o)
	require.NoError(t, err)
	t.Cleanup(func() { ctl.Close() })
	return serve(t, ctl)
}

// serve serves ctl to an SDK client over an in-memory pipe until the test
// ends, and returns the client's session.
func serve(t testing.TB, ctl *control.Control) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mcpserver.New(ctl, "test").Run(ctx, st) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls tool with args, requires it to succeed, and decodes its
// structured result into a T.
func call[T any](t *testing.T, cs *mcp.ClientSession, tool string, args any) T {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err, "%s: protocol error", tool)
	require.False(t, res.IsError, "%s(%v) failed: %s", tool, args, text(res))
	var out T
	data, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &out), "%s: structured content %s", tool, data)
	return out
}

// refused calls tool with args, requires a tool error (IsError, not a
// protocol error) and returns its text.
func refused(t *testing.T, cs *mcp.ClientSession, tool string, args any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err, "%s: protocol error", tool)
	require.True(t, res.IsError, "%s(%v) should fail; got %s", tool, args, text(res))
	t.Logf("%s(%v) refused: %s", tool, args, text(res))
	return text(res)
}

// text joins a result's text content.
func text(res *mcp.CallToolResult) string {
	var s string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}

// eventually polls status until ok holds, failing after d.
func eventually(t *testing.T, cs *mcp.ClientSession, d time.Duration, what string, ok func(mcpserver.Status) bool) mcpserver.Status {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := call[mcpserver.Status](t, cs, "status", nil)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never showed %s within %s; last: %+v", what, d, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
