package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

const goodTasks = `{"tasks": [{"id": 1, "title": "a", "description": "d", "details": "", "testStrategy": "", "priority": "high", "dependencies": []},
 {"id": 2, "title": "b", "description": "d", "details": "x", "testStrategy": "y", "priority": "low", "dependencies": [1]}]}`

func TestSpecTasks(t *testing.T) {
	tests := []struct {
		name    string
		replies []llmtest.Reply
		n       int   // tasks got
		err     error // matched with errors.Is
		calls   int
		tokens  int
	}{
		{"answered", []llmtest.Reply{llmtest.Text(goodTasks, 10)}, 2, nil, 1, 10},
		{"repaired once", []llmtest.Reply{llmtest.Text(`{"tasks": [{"id": 5, "title": "a", "description": "d", "priority": "high"}]}`, 10), llmtest.Text(goodTasks, 10)}, 2, nil, 2, 20},
		{"twice without a list", []llmtest.Reply{llmtest.Text("no", 10), llmtest.Text(`{"tasks": []}`, 10)}, 0, ErrInvalidSpec, 2, 20},
		{"json_schema refused", []llmtest.Reply{llmtest.Error(400, "response_format json_schema is not supported", "invalid_request_error"), llmtest.Text(goodTasks, 10)}, 2, nil, 2, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := llmtest.NewServer(t, tt.replies...)
			c, _ := newTestClient(t, s, nil)
			got, usage, err := c.SpecTasks(context.Background(), "# PRD", 2, nil)
			require.ErrorIs(t, err, tt.err)
			assert.Len(t, got, tt.n)
			assert.Equal(t, tt.calls, s.Count())
			assert.Equal(t, tt.tokens, usage.Total)
			reqs := s.Requests()
			require.NotNil(t, reqs[0].ResponseFormat, "the first call asks for the schema")
			assert.Equal(t, openai.ChatCompletionResponseFormatTypeJSONSchema, reqs[0].ResponseFormat.Type)
			if tt.name == "json_schema refused" {
				assert.Nil(t, reqs[1].ResponseFormat, "asked again without it")
			}
		})
	}
}

// TestSpecSchemaIsStrict: the reply schema is one a strict json_schema
// server accepts: every object lists all its properties as required and
// allows no others.
func TestSpecSchemaIsStrict(t *testing.T) {
	for _, raw := range []json.RawMessage{listSchema("tasks", specTaskSchema(true)), listSchema("subtasks", specTaskSchema(false)), listSchema("complexityAnalysis", complexitySchema)} {
		var walk func(v map[string]any)
		walk = func(v map[string]any) {
			if v["type"] == "object" {
				props := v["properties"].(map[string]any)
				req := v["required"].([]any)
				assert.Len(t, req, len(props), "%s", raw)
				assert.Equal(t, false, v["additionalProperties"])
				for _, p := range props {
					walk(p.(map[string]any))
				}
			}
			if items, ok := v["items"].(map[string]any); ok {
				walk(items)
			}
		}
		var v map[string]any
		require.NoError(t, json.Unmarshal(raw, &v))
		walk(v)
	}
}

func TestComplexity(t *testing.T) {
	tasks := []TaskInfo{{ID: "1", Title: "One"}, {ID: "2", Title: "Two"}}
	entry := func(id string, score int) string {
		return fmt.Sprintf(`{"taskId": %q, "taskTitle": "x", "complexityScore": %d, "recommendedSubtasks": 2, "expansionPrompt": "p", "reasoning": "r"}`, id, score)
	}
	s := llmtest.NewServer(t,
		llmtest.Text(`{"complexityAnalysis": [`+entry("2", 3)+`,`+entry("9", 4)+`]}`, 5), // a task missing, one not given
		llmtest.Text(`{"complexityAnalysis": [`+entry("2", 3)+`,`+entry("1", 8)+`]}`, 5))
	c, _ := newTestClient(t, s, nil)
	got, _, err := c.Complexity(context.Background(), tasks, nil)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, Complexity{TaskID: "1", Title: "One", Score: 8, RecommendedSubtasks: 2, ExpansionPrompt: "p", Reasoning: "r"}, got[0], "in the order given, with the task's own title")
	assert.Equal(t, 3, got[1].Score)
	assert.Contains(t, s.Requests()[1].Messages[3].Content, `task "1" has no entry`)

	s = llmtest.NewServer(t, llmtest.Text(`{"complexityAnalysis": [`+entry("1", 11)+`,`+entry("2", 3)+`]}`, 5))
	s.SetFallback(llmtest.Always(llmtest.Text(`{"complexityAnalysis": [`+entry("1", 11)+`,`+entry("2", 3)+`]}`, 5)))
	c, _ = newTestClient(t, s, nil)
	_, _, err = c.Complexity(context.Background(), tasks, nil)
	require.ErrorIs(t, err, ErrInvalidSpec)
	assert.ErrorContains(t, err, "complexityScore 11 is not from 1 to 10")
}
