package llm

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

var testTask = TaskInfo{
	ID:           "7",
	Title:        "Fix Parse for empty input",
	Description:  "Parse panics on an empty string.",
	Details:      "Return ErrEmpty instead.",
	TestStrategy: "TestParseEmpty",
}

const goodPlan = `{"summary":"Return ErrEmpty","steps":["add the check","add a test"],"files":["parse.go"],"test_strategy":"go test ./..."}`

func TestPlan(t *testing.T) {
	want := Plan{Summary: "Return ErrEmpty", Steps: []string{"add the check", "add a test"}, Files: []string{"parse.go"}, TestStrategy: "go test ./..."}
	tests := []struct {
		name     string
		replies  []llmtest.Reply
		requests int
		usage    int
		repair   string // text the repair request must contain; "" = no repair
	}{
		{"plain JSON", []llmtest.Reply{llmtest.Text(goodPlan, 100)}, 1, 100, ""},
		{"inside a code fence", []llmtest.Reply{llmtest.Text("Here is the plan:\n```json\n"+goodPlan+"\n```\n", 100)}, 1, 100, ""},
		{"invalid JSON then repaired", []llmtest.Reply{llmtest.Text(`{"summary": "x", "steps": [`, 100), llmtest.Text(goodPlan, 120)}, 2, 220,
			"the JSON object does not parse: unexpected end of JSON input"},
		{"missing fields then repaired", []llmtest.Reply{llmtest.Text(`{"summary":"x","files":[]}`, 100), llmtest.Text(goodPlan, 120)}, 2, 220,
			"missing or empty field(s): steps, test_strategy"},
		{"prose then repaired", []llmtest.Reply{llmtest.Text("I would change parse.go.", 10), llmtest.Text(goodPlan, 120)}, 2, 130,
			"the answer holds no JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := llmtest.NewServer(t, tt.replies...)
			c, _ := newTestClient(t, f, nil)
			budget := NewBudget(0, nil)
			plan, usage, err := c.Plan(t.Context(), testTask, "parse.go  1.2 KiB\n", budget)
			require.NoError(t, err)
			assert.Equal(t, want, plan)
			assert.Equal(t, tt.usage, usage.Total)
			assert.Equal(t, tt.usage, budget.Spent())
			reqs := f.Requests()
			require.Len(t, reqs, tt.requests)
			first := reqs[0].Messages[1].Content
			for _, s := range []string{"Task 7: Fix Parse for empty input", "Parse panics", "Return ErrEmpty instead.", "TestParseEmpty", "parse.go  1.2 KiB"} {
				assert.Contains(t, first, s)
			}
			assert.Nil(t, reqs[0].ResponseFormat, "JSON mode is off by default")
			if tt.repair != "" {
				msgs := reqs[1].Messages
				require.Len(t, msgs, 4)
				assert.Equal(t, openai.ChatMessageRoleAssistant, msgs[2].Role)
				var bad openai.ChatCompletionResponse
				require.NoError(t, json.Unmarshal([]byte(tt.replies[0].Body), &bad))
				assert.Equal(t, bad.Choices[0].Message.Content, msgs[2].Content, "the bad answer is sent back")
				assert.Equal(t, openai.ChatMessageRoleUser, msgs[3].Role)
				assert.Contains(t, msgs[3].Content, tt.repair)
			}
		})
	}
}

func TestPlanInvalidTwice(t *testing.T) {
	f := llmtest.NewServer(t, llmtest.Text("not json", 10), llmtest.Text(`{"summary": ""}`, 10))
	c, _ := newTestClient(t, f, nil)
	_, usage, err := c.Plan(t.Context(), testTask, "", nil)
	require.ErrorIs(t, err, ErrInvalidPlan)
	for _, s := range []string{"task 7", "test-model", "twice", "missing or empty field(s): summary, steps, files, test_strategy", `{\"summary\": \"\"}`} {
		assert.Contains(t, err.Error(), s)
	}
	assert.Equal(t, 20, usage.Total)
	assert.Len(t, f.Requests(), 2, "exactly one repair round")
}

func TestPlanJSONModeAndErrors(t *testing.T) {
	f := llmtest.NewServer(t, llmtest.Text(goodPlan, 10), llmtest.Error(401, "bad key", ""))
	c, _ := newTestClient(t, f, func(cfg *Config) { cfg.JSONMode = true })
	_, _, err := c.Plan(t.Context(), testTask, "", nil)
	require.NoError(t, err)
	reqs := f.Requests()
	require.NotNil(t, reqs[0].ResponseFormat)
	assert.Equal(t, openai.ChatCompletionResponseFormatTypeJSONObject, reqs[0].ResponseFormat.Type)

	_, _, err = c.Plan(t.Context(), testTask, "", nil)
	require.ErrorIs(t, err, ErrAuth)
	assert.Contains(t, err.Error(), "planner: task 7")

	spent := NewBudget(5, nil)
	spent.Add(Usage{Total: 5})
	_, _, err = c.Plan(t.Context(), testTask, "", spent)
	require.ErrorIs(t, err, ErrBudget)
	assert.Len(t, f.Requests(), 2, "a spent budget makes no request")
}

func TestParsePlanAcceptsTestStrategyAlias(t *testing.T) {
	p, err := parsePlan(`{"summary":"s","steps":["a"],"files":[],"testStrategy":"run it"}`)
	require.NoError(t, err)
	assert.Equal(t, Plan{Summary: "s", Steps: []string{"a"}, Files: []string{}, TestStrategy: "run it"}, p)
	_, err = parsePlan(`{"summary":"s","steps":"a","files":[],"test_strategy":""}`)
	require.ErrorContains(t, err, "does not parse")
}

func FuzzParsePlan(f *testing.F) {
	f.Add(goodPlan)
	f.Add("```json\n" + goodPlan + "\n```")
	f.Add(`{"summary": "x", "steps": [`)
	f.Add("}{")
	f.Fuzz(func(t *testing.T, answer string) {
		p, err := parsePlan(answer)
		if err == nil && (strings.TrimSpace(p.Summary) == "" || len(p.Steps) == 0) {
			t.Fatalf("parsePlan(%q) accepted a plan without summary or steps: %+v", answer, p)
		}
	})
}

func TestRepoView(t *testing.T) {
	root := t.TempDir()
	write := func(rel string, size int) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(strings.Repeat("x", size)), 0o644))
	}
	write("go.mod", 40)
	write("cmd/app/main.go", 2048)
	write("big.bin", 3<<20)
	write(".git/HEAD", 20)
	write(".git/objects/ab/cdef", 20)

	got, err := RepoView(root, 0)
	require.NoError(t, err)
	want := "big.bin  3.0 MiB\ncmd/\n  app/\n    main.go  2.0 KiB\ngo.mod  40 B\n"
	assert.Equal(t, want, got)

	capped, err := RepoView(root, 2)
	require.NoError(t, err)
	assert.Equal(t, "big.bin  3.0 MiB\ncmd/\n… (listing stopped at 2 entries)\n", capped)

	empty, err := RepoView(t.TempDir(), 10)
	require.NoError(t, err)
	assert.Equal(t, "(empty repository)\n", empty)

	_, err = RepoView(filepath.Join(root, "missing"), 10)
	require.ErrorContains(t, err, "repository view")
	_, err = RepoView(filepath.Join(root, "go.mod"), 10)
	require.ErrorContains(t, err, "not a directory")
}
