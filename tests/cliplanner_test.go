package tests

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

// TestCommandExecutorDoesNotCallThePlanner: with a model configured, a
// task whose executor is an agent CLI (a command) runs without a single
// request to the model: the CLI plans its own work. A model task of the
// same plan still asks it for its plan. (Before, the command task's
// planner called the model too: 3 requests here, not 2.)
func TestCommandExecutorDoesNotCallThePlanner(t *testing.T) {
	t.Parallel()
	tasksJSON := `{"tasks": [
  {"id": 1, "title": "By a command", "executor": {"command": ["sh", "-c", "echo cmd > cmd.txt"]}, "test_cmd": ["test", "-f", "cmd.txt"]},
  {"id": 2, "title": "By the model", "dependencies": [1], "test_cmd": ["test", "-f", "hello.txt"]}
]}
`
	dir := newRepo(t, map[string]string{"tasks.json": tasksJSON})
	m := llmtest.NewServer(t,
		llmtest.Text(`{"summary": "write it", "steps": ["write hello.txt"], "files": ["hello.txt"], "test_strategy": "test -f hello.txt"}`, 10),
		llmtest.ToolCalls(10, llmtest.WriteFile("hello.txt", "hi\n"), llmtest.Finish("wrote hello.txt")))
	r := statgraphEnv(t, dir, []string{"STATGRAPH_MODEL=" + llmtest.Model, "OPENAI_BASE_URL=" + m.BaseURL()}, "run", noSandbox, "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	got := readTasks(t, filepath.Join(dir, "tasks.json"))
	assert.Equal(t, "done", got["1"].Status)
	assert.Equal(t, "done", got["2"].Status)
	assert.Equal(t, 2, m.Count(), "requests to the model: task 2's plan and its executor turn, none for task 1")
	for _, req := range m.Requests() {
		for _, msg := range req.Messages {
			assert.NotContains(t, msg.Content, "By a command", "a request about the command task")
		}
	}
}
