package web_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/llm/llmtest"
	"github.com/statgraph/statgraph/control"
)

// askPlan: task 1 (LLM executor, on_exhausted "ask", one verification)
// fails its first attempt and passes the next; task 2 waits for it.
const askPlan = `{"tasks": [
  {"id": 1, "title": "write fixed", "max_retries": 1, "on_exhausted": "ask",
   "test_cmd": "grep -q fixed out.txt"},
  {"id": 2, "title": "after one", "dependencies": [1],
   "executor": {"command": ["sh", "-c", "echo two > two.txt"]}, "test_cmd": "test -f two.txt"}
]}
`

// newModel is the scripted model for askPlan: the first write_file writes
// "broken", the later ones "fixed", each after delay.
func newModel(t testing.TB, delay time.Duration) llm.Config {
	srv := llmtest.NewServer(t)
	var mu sync.Mutex
	writes := 0
	srv.SetFallback(func(req openai.ChatCompletionRequest) llmtest.Reply {
		if len(req.Tools) == 0 {
			return llmtest.Text(`{"summary":"write out.txt","steps":["write it"],"files":["out.txt"],"test_strategy":"grep"}`, 7)
		}
		if req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleTool {
			return llmtest.ToolCalls(3, llmtest.Finish("wrote out.txt"))
		}
		mu.Lock()
		defer mu.Unlock()
		writes++
		body := "fixed\n"
		if writes == 1 {
			body = "broken\n"
		}
		r := llmtest.ToolCalls(11, llmtest.WriteFile("out.txt", body))
		r.Delay = delay
		return r
	})
	return llm.Config{BaseURL: srv.BaseURL(), Model: llmtest.Model, HTTPClient: srv.Client()}
}

// newControl makes a repository holding tasksJSON in a fresh STATGRAPH_HOME
// and a Control on it.
func newControl(t testing.TB, tasksJSON string, mc llm.Config) *control.Control {
	t.Helper()
	t.Setenv("STATGRAPH_HOME", t.TempDir())
	dir := t.TempDir()
	for name, body := range map[string]string{"tasks.json": tasksJSON, "README": "x\n"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	c, err := control.Open(control.Options{File: filepath.Join(dir, "tasks.json"), Model: mc, Jobs: 1, Poll: 50 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}
