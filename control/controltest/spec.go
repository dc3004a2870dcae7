package controltest

import (
	"net/http"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

// LandPlan is a plan for land: task 1 writes a.txt; task 2's check holds
// on its own branch but fails once task 1 has landed (blocked on its
// checks, its agent changing nothing); task 3 depends on 2 (waiting).
const LandPlan = `{"defaults": {"max_retries": 1},
 "tasks": [
  {"id": 1, "title": "One", "executor": {"command": ["sh", "-c", "echo one > a.txt"]}, "test_cmd": "test -f a.txt"},
  {"id": 2, "title": "Two", "executor": {"command": ["sh", "-c", "echo two > b.txt"]}, "test_cmd": "test ! -f a.txt"},
  {"id": 3, "title": "Three", "dependencies": [2], "executor": {"command": ["sh", "-c", "echo three > c.txt"]}, "test_cmd": "test -f c.txt"}
 ]}
`

// SpecModel answers statgraph plan's, expand's and complexity's requests
// by the name of the JSON schema each asks for: two tasks (2 depends on
// 1), two subtasks, and a score of 4 for task 1.
func SpecModel(t testing.TB) llm.Config {
	s := llmtest.NewServer(t)
	s.SetFallback(func(req openai.ChatCompletionRequest) llmtest.Reply {
		name := ""
		if req.ResponseFormat != nil && req.ResponseFormat.JSONSchema != nil {
			name = req.ResponseFormat.JSONSchema.Name
		}
		switch name {
		case "tasks":
			return llmtest.Text(`{"tasks": [
 {"id": 1, "title": "Count words", "description": "Write Count.", "details": "in wc.go", "testStrategy": "a table test", "priority": "high", "dependencies": []},
 {"id": 2, "title": "Add the command", "description": "Print the count.", "details": "main", "testStrategy": "run it", "priority": "low", "dependencies": [1]}]}`, 30)
		case "subtasks":
			return llmtest.Text(`{"subtasks": [
 {"id": 1, "title": "Split", "description": "Split on spaces.", "details": "strings.Fields", "testStrategy": "table", "dependencies": []},
 {"id": 2, "title": "Count", "description": "Return the count.", "details": "len", "testStrategy": "table", "dependencies": [1]}]}`, 20)
		case "complexity_analysis":
			return llmtest.Text(`{"complexityAnalysis": [{"taskId": "1", "taskTitle": "one", "complexityScore": 4, "recommendedSubtasks": 2, "expansionPrompt": "split it", "reasoning": "small"}]}`, 10)
		}
		return llmtest.Error(http.StatusBadRequest, "unexpected request "+name, "")
	})
	return llm.Config{BaseURL: s.BaseURL(), Model: llmtest.Model, HTTPClient: s.Client()}
}
