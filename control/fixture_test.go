package control_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/llm/llmtest"
	"github.com/statgraph/statgraph/control"
)

// gitRepo makes a repository in dir with one commit of files.
func gitRepo(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o755))
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
}

// askPlan is a plan whose task 1 (the LLM executor, on_exhausted "ask",
// one attempt) fails its first attempt and passes the next, and whose task
// 2 (an agent CLI) waits for it.
const askPlan = `{"tasks": [
  {"id": 1, "title": "write fixed", "max_retries": 1, "on_exhausted": "ask",
   "test_cmd": "grep -q fixed out.txt"},
  {"id": 2, "title": "after one", "dependencies": [1],
   "executor": {"command": ["sh", "-c", "echo two > two.txt"]}, "test_cmd": "test -f two.txt"}
]}
`

// model is the scripted model for askPlan: the first write_file writes
// "broken", every later one "fixed"; hold, when set, delays each write.
type model struct {
	*llmtest.Server
	mu     sync.Mutex
	writes int
	hold   time.Duration
}

func newModel(t *testing.T) *model {
	m := &model{Server: llmtest.NewServer(t)}
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
		if m.writes == 1 {
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

// newPlan makes a repository holding tasks (the file's text) in a fresh
// STATGRAPH_HOME and returns the tasks file's path.
func newPlan(t *testing.T, tasksJSON string) string {
	t.Helper()
	t.Setenv("STATGRAPH_HOME", t.TempDir())
	dir := t.TempDir()
	gitRepo(t, dir, map[string]string{"tasks.json": tasksJSON, "README": "x\n"})
	return filepath.Join(dir, "tasks.json")
}

// waitFor reads sub until an event satisfies ok, failing after d; it
// returns the events read, that one last.
func waitFor(t *testing.T, sub *control.Subscription, d time.Duration, what string, ok func(control.Event) bool) []control.Event {
	t.Helper()
	var seen []control.Event
	timeout := time.After(d)
	for {
		select {
		case e, open := <-sub.C:
			require.True(t, open, "subscription closed while waiting for %s", what)
			seen = append(seen, e)
			if ok(e) {
				return seen
			}
		case <-timeout:
			var kinds []string
			for _, e := range seen {
				s := string(e.Kind) + ":" + e.Unit
				if e.Task != nil {
					s += ":" + e.Task.Status + "/" + e.Task.Phase
				}
				kinds = append(kinds, s)
			}
			t.Fatalf("no event for %s within %s; saw %s", what, d, strings.Join(kinds, " "))
		}
	}
}

func taskEvent(id, status string) func(control.Event) bool {
	return func(e control.Event) bool {
		return e.Kind == control.EventTask && e.Unit == id && e.Task.Status == status
	}
}

var bg = context.Background()
