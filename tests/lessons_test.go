package tests

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

// TestLessonReachesTheNextTask: task 1 fails its check on the first
// attempt and passes on the retry; the run records that as a lesson of
// the repository, and task 2's planner prompt, as the scripted server
// received it, carries it (task 1's did not: there was nothing to learn
// yet). Task 2's executor prompt carries it too, its review prompt does
// not: a reviewer weighs the change against the task only. statgraph
// lessons lists it, and lessons rm removes it.
func TestLessonReachesTheNextTask(t *testing.T) {
	t.Parallel()
	m := llmtest.NewServer(t)
	m.SetFallback(func(req openai.ChatCompletionRequest) llmtest.Reply {
		prompt := req.Messages[1].Content
		switch {
		case strings.HasPrefix(req.Messages[0].Content, "You review a change"):
			return llmtest.Text(`{"approve": true, "feedback": "fine"}`, 10)
		case len(req.Tools) == 0:
			return llmtest.Text(`{"summary":"write out.txt","steps":["write out.txt"],"files":["out.txt"],"test_strategy":"grep"}`, 10)
		case req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleTool:
			return llmtest.ToolCalls(10, llmtest.Finish("wrote the word good into out.txt"))
		case strings.Contains(prompt, "## Task 1:") && strings.Contains(prompt, "Attempt 1 of"):
			return llmtest.ToolCalls(10, llmtest.WriteFile("out.txt", "bad\n"))
		case strings.Contains(prompt, "## Task 2:"):
			return llmtest.ToolCalls(10, llmtest.WriteFile("out.txt", "good\nagain\n"))
		}
		return llmtest.ToolCalls(10, llmtest.WriteFile("out.txt", "good\n"))
	})
	dir := newRepo(t, map[string]string{"tasks.json": `{"tasks": [
		{"id": 1, "title": "Write out.txt", "test_cmd": "grep -q good out.txt"},
		{"id": 2, "title": "Write out.txt again", "dependencies": [1], "review": true, "test_cmd": "grep -q good out.txt"}]}
`})
	env := []string{"OPENAI_BASE_URL=" + m.BaseURL(), "OPENAI_API_KEY=test-key", "STATGRAPH_HOME=" + filepath.Join(t.TempDir(), "state")}
	r := statgraphEnv(t, dir, env, "run", "-j", "1", "--model", "gpt-4o", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)

	plannerPrompt, executorPrompt, reviewPrompt := map[string]string{}, map[string]string{}, map[string]string{}
	for _, req := range m.Requests() {
		prompts := plannerPrompt
		switch {
		case strings.HasPrefix(req.Messages[0].Content, "You review a change"):
			prompts = reviewPrompt
		case len(req.Tools) > 0:
			prompts = executorPrompt
		}
		for _, id := range []string{"1", "2"} {
			if strings.Contains(req.Messages[1].Content, "## Task "+id+":") {
				prompts[id] = req.Messages[1].Content
			}
		}
	}
	require.Contains(t, plannerPrompt, "2", "task 2 was planned")
	require.Contains(t, reviewPrompt, "2", "task 2 was reviewed")
	assert.NotContains(t, plannerPrompt["1"], "Lessons from earlier tasks", "task 1 had nothing to learn from")
	lesson := "Lessons from earlier tasks in this repository:\n- In task 1 (Write out.txt), check \"tests\" failed on attempt 1"
	assert.Contains(t, plannerPrompt["2"], lesson)
	assert.Contains(t, plannerPrompt["2"], "attempt 2 passed: wrote the word good into out.txt.")
	assert.Contains(t, executorPrompt["2"], lesson)
	assert.NotContains(t, reviewPrompt["2"], "Lessons from earlier tasks", "the review prompt carries the lessons")

	r = statgraphEnv(t, dir, env, "lessons")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Contains(t, r.stdout, "retry:1")
	assert.Contains(t, r.stdout, `check "tests" failed on attempt 1`)
	r = statgraphEnv(t, dir, env, "lessons", "list", "--json")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	var got struct {
		Key, Kind, Task, Text string
		Checks                []string
		Learned               time.Time
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), "lessons --json printed %q", r.stdout)
	assert.Equal(t, "retry:1", got.Key)
	assert.Equal(t, []string{"tests"}, got.Checks)
	assert.Contains(t, got.Text, `check "tests" failed on attempt 1`)
	assert.False(t, got.Learned.IsZero(), "no learned time: %s", r.stdout)
	r = statgraphEnv(t, dir, env, "lessons", "rm", "retry:1")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	r = statgraphEnv(t, dir, env, "lessons", "list")
	require.Equal(t, 0, r.code, "stderr:\n%s", r.stderr)
	assert.Contains(t, r.stdout, "no lessons for")
	r = statgraphEnv(t, dir, env, "lessons", "rm", "retry:1")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, `no lesson "retry:1"`)
}
