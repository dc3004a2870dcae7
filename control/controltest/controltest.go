// Package controltest holds the fixtures that the tests of control, the
// web UI and the MCP server share: a plan whose first task escalates, the
// scripted model that drives it, and a plan in a fresh git repository.
package controltest

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/llm/llmtest"
	"github.com/statgraph/statgraph/internal/gittest"
)

// AskPlan is a plan whose task 1 (the LLM executor, on_exhausted "ask",
// one verification) fails its first attempt and passes the next when the
// Model drives it, and whose task 2 (an agent CLI) waits for task 1.
const AskPlan = `{"tasks": [
  {"id": 1, "title": "write fixed", "max_retries": 1, "on_exhausted": "ask",
   "test_cmd": "grep -q fixed out.txt"},
  {"id": 2, "title": "after one", "dependencies": [1],
   "executor": {"command": ["sh", "-c", "echo two > two.txt"]}, "test_cmd": "test -f two.txt"}
]}
`

// Model is the scripted model for AskPlan: the first write_file writes
// "broken", every later one "fixed" (every one "broken" while SetBroken is
// on), each after the hold SetHold gives. It is safe for concurrent use.
type Model struct {
	*llmtest.Server
	mu     sync.Mutex
	writes int
	hold   time.Duration
	broken bool
}

// NewModel starts a Model that ends with the test.
func NewModel(t testing.TB) *Model {
	m := &Model{Server: llmtest.NewServer(t)}
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

// SetHold delays each later write_file reply by d.
func (m *Model) SetHold(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hold = d
}

// SetBroken makes every later write_file write "broken" (on) or the usual
// sequence resume (off).
func (m *Model) SetBroken(on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.broken = on
}

// Config is the client configuration that talks to m.
func (m *Model) Config() llm.Config {
	return llm.Config{BaseURL: m.BaseURL(), Model: llmtest.Model, HTTPClient: m.Client()}
}

// NewPlan makes a git repository holding tasksJSON as tasks.json (and a
// README), with a fresh STATGRAPH_HOME for the test, and returns the tasks
// file's path.
func NewPlan(t testing.TB, tasksJSON string) string {
	t.Helper()
	t.Setenv("STATGRAPH_HOME", t.TempDir())
	dir := gittest.Repo(t, map[string]string{"tasks.json": tasksJSON, "README": "x\n"})
	return filepath.Join(dir, "tasks.json")
}
