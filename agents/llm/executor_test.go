package llm

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
	"github.com/statgraph/statgraph/internal/secret"
)

// fakeFS is an in-memory FileSystem that refuses paths leaving the root or
// touching .git, as the real workspace does.
type fakeFS struct {
	mu    sync.Mutex // guards files
	files map[string]string
}

func newFakeFS(files map[string]string) *fakeFS {
	if files == nil {
		files = map[string]string{}
	}
	return &fakeFS{files: files}
}

func (f *fakeFS) clean(p string) (string, error) {
	c := path.Clean(p)
	if path.IsAbs(c) || c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("path %q escapes the workspace", p)
	}
	if c == ".git" || strings.HasPrefix(c, ".git/") {
		return "", fmt.Errorf("path %q is inside .git", p)
	}
	return c, nil
}

func (f *fakeFS) ListFiles(dir string, max int) ([]string, error) {
	d, err := f.clean(dir)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for p := range f.files {
		if d == "." || strings.HasPrefix(p, d+"/") {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out[:min(len(out), max)], nil
}

func (f *fakeFS) ReadFile(p string) (string, error) {
	c, err := f.clean(p)
	if err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	content, ok := f.files[c]
	if !ok {
		return "", fmt.Errorf("file %q does not exist", p)
	}
	return content, nil
}

func (f *fakeFS) Search(pattern string, max int) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for p, content := range f.files {
		for i, line := range strings.Split(content, "\n") {
			if strings.Contains(line, pattern) {
				out = append(out, fmt.Sprintf("%s:%d: %s", p, i+1, line))
			}
		}
	}
	slices.Sort(out)
	return out[:min(len(out), max)], nil
}

func (f *fakeFS) WriteFile(p, content string) error {
	c, err := f.clean(p)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files[c] = content
	return nil
}

func (f *fakeFS) ReplaceInFile(p, old, new string) error {
	c, err := f.clean(p)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	content, ok := f.files[c]
	if !ok {
		return fmt.Errorf("file %q does not exist", p)
	}
	if n := strings.Count(content, old); n != 1 {
		return fmt.Errorf("old text occurs %d times in %s, want exactly 1", n, p)
	}
	f.files[c] = strings.Replace(content, old, new, 1)
	return nil
}

func (f *fakeFS) snapshot() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]string{}
	for k, v := range f.files {
		out[k] = v
	}
	return out
}

// toolMessages returns the tool messages of a request.
func toolMessages(req openai.ChatCompletionRequest) []openai.ChatCompletionMessage {
	var out []openai.ChatCompletionMessage
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleTool {
			out = append(out, m)
		}
	}
	return out
}

var execReq = ExecRequest{Task: testTask, Attempt: 1, MaxAttempts: 3}

func TestExecuteWritesAndFinishes(t *testing.T) {
	f := llmtest.NewServer(t,
		llmtest.ToolCalls(50, llmtest.WriteFile("parse.go", "package p\n")),
		llmtest.ToolCalls(40, llmtest.Finish("added parse.go")),
	)
	c, _ := newTestClient(t, f, nil)
	fsys := newFakeFS(nil)
	budget := NewBudget(0, nil)
	res, err := c.Execute(t.Context(), fsys, execReq, budget)
	require.NoError(t, err)
	assert.Equal(t, ExecResult{Summary: "added parse.go", Turns: 2, Usage: Usage{Prompt: 67, Completion: 23, Total: 90, Unpriced: 90}, ToolCalls: 2, Finished: true,
		LastReply: `→ finish {"summary":"added parse.go"}`}, res)
	assert.Equal(t, 90, budget.Spent())
	assert.Equal(t, map[string]string{"parse.go": "package p\n"}, fsys.snapshot())

	reqs := f.Requests()
	require.Len(t, reqs, 2)
	var names []string
	for _, tl := range reqs[0].Tools {
		names = append(names, tl.Function.Name)
		var schema map[string]any
		raw, err := json.Marshal(tl.Function.Parameters)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, &schema), "schema of %s", tl.Function.Name)
		assert.Equal(t, "object", schema["type"])
	}
	assert.Equal(t, []string{"list_files", "read_file", "search", "write_file", "replace_in_file", "finish"}, names)

	msgs := reqs[1].Messages
	require.Len(t, msgs, 4)
	assert.Equal(t, openai.ChatMessageRoleAssistant, msgs[2].Role)
	require.Len(t, msgs[2].ToolCalls, 1)
	assert.Equal(t, "call_1", msgs[2].ToolCalls[0].ID)
	assert.Equal(t, openai.ChatMessageRoleTool, msgs[3].Role)
	assert.Equal(t, "call_1", msgs[3].ToolCallID)
	assert.Equal(t, "wrote 10 bytes to parse.go", msgs[3].Content)
}

func TestExecuteReturnsToolErrorsToTheModel(t *testing.T) {
	f := llmtest.NewServer(t,
		llmtest.ToolCalls(10,
			llmtest.WriteFile("../outside.txt", "x"),
			llmtest.Call{Name: "replace_in_file", Arguments: `{"path":"main.go","old":"missing","new":"y"}`},
			llmtest.Call{Name: "delete_file", Arguments: `{"path":"main.go"}`},
			llmtest.Call{Name: "read_file", Arguments: `{"path":`},
		),
		llmtest.ToolCalls(10, llmtest.Call{Name: "replace_in_file", Arguments: `{"path":"main.go","old":"return 2","new":"return 3"}`}),
		llmtest.ToolCalls(10, llmtest.Finish("fixed")),
	)
	c, _ := newTestClient(t, f, nil)
	fsys := newFakeFS(map[string]string{"main.go": "func f() int { return 2 }"})
	res, err := c.Execute(t.Context(), fsys, execReq, nil)
	require.NoError(t, err)
	assert.True(t, res.Finished)
	assert.Equal(t, 6, res.ToolCalls)
	assert.Equal(t, map[string]string{"main.go": "func f() int { return 3 }"}, fsys.snapshot(), "outside.txt was not created")

	reqs := f.Requests()
	require.Len(t, reqs, 3)
	tools := toolMessages(reqs[1])
	require.Len(t, tools, 4)
	want := []struct{ id, content string }{
		{"call_1", `error: write_file "../outside.txt": path "../outside.txt" escapes the workspace`},
		{"call_2", "error: replace_in_file \"main.go\": old text occurs 0 times in main.go, want exactly 1"},
		{"call_3", `error: unknown tool "delete_file"`},
		{"call_4", "error: read_file: arguments are not a valid JSON object"},
	}
	for i, w := range want {
		assert.Equal(t, w.id, tools[i].ToolCallID)
		assert.Contains(t, tools[i].Content, w.content)
	}
	assert.Equal(t, "replaced 1 occurrence in main.go", toolMessages(reqs[2])[4].Content)
}

func TestExecuteTurnLimit(t *testing.T) {
	f := llmtest.NewServer(t)
	loop := llmtest.ToolCalls(10, llmtest.Call{Name: "list_files", Arguments: `{"dir":"."}`})
	f.SetFallback(llmtest.Always(loop))
	c, _ := newTestClient(t, f, nil)
	req := execReq
	req.MaxTurns = 3
	res, err := c.Execute(t.Context(), newFakeFS(map[string]string{"a.go": ""}), req, nil)
	require.NoError(t, err, "the turn limit ends the attempt without an error; verification decides")
	assert.False(t, res.Finished)
	assert.Equal(t, 3, res.Turns)
	assert.Contains(t, res.Summary, "turn limit of 3 reached")
	assert.Len(t, f.Requests(), 3)
	assert.Equal(t, "a.go", toolMessages(f.Requests()[2])[1].Content)
}

func TestExecuteNudgesTextOnlyReplies(t *testing.T) {
	f := llmtest.NewServer(t, llmtest.Text("I will now edit the file.", 5), llmtest.ToolCalls(5, llmtest.Finish("nothing to do")))
	c, _ := newTestClient(t, f, nil)
	res, err := c.Execute(t.Context(), newFakeFS(nil), execReq, nil)
	require.NoError(t, err)
	assert.Equal(t, "nothing to do", res.Summary)
	msgs := f.Requests()[1].Messages
	assert.Equal(t, openai.ChatMessageRoleUser, msgs[len(msgs)-1].Role)
	assert.Contains(t, msgs[len(msgs)-1].Content, "call finish")
}

func TestExecuteCapsToolOutput(t *testing.T) {
	f := llmtest.NewServer(t,
		llmtest.ToolCalls(5, llmtest.Call{Name: "read_file", Arguments: `{"path":"big.txt"}`}),
		llmtest.ToolCalls(5, llmtest.Finish("read")),
	)
	c, _ := newTestClient(t, f, nil)
	req := execReq
	req.MaxToolOutput = 1000
	_, err := c.Execute(t.Context(), newFakeFS(map[string]string{"big.txt": strings.Repeat("é", 50_000)}), req, nil)
	require.NoError(t, err)
	out := toolMessages(f.Requests()[1])[0].Content
	assert.Contains(t, out, "[output truncated: 1000 of 100000 bytes shown")
	assert.Less(t, len(out), 1200)
}

func TestExecuteBudgetExhausted(t *testing.T) {
	f := llmtest.NewServer(t)
	loop := llmtest.ToolCalls(60, llmtest.Call{Name: "list_files", Arguments: `{"dir":"."}`})
	f.SetFallback(llmtest.Always(loop))
	c, _ := newTestClient(t, f, nil)
	budget := NewBudget(100, nil)
	res, err := c.Execute(t.Context(), newFakeFS(nil), execReq, budget)
	require.ErrorIs(t, err, ErrBudget)
	assert.Contains(t, err.Error(), "executor: task 7, turn 3")
	assert.Contains(t, err.Error(), "task budget of 100 tokens spent (120 used)")
	assert.Equal(t, 2, res.Turns)
	assert.Len(t, f.Requests(), 2)
	assert.LessOrEqual(t, budget.Spent(), 100+60)
}

func TestExecutePromptCarriesAttemptAndFeedback(t *testing.T) {
	f := llmtest.NewServer(t, llmtest.ToolCalls(5, llmtest.Finish("ok")))
	c, _ := newTestClient(t, f, nil)
	req := ExecRequest{
		Task:        testTask,
		Plan:        Plan{Summary: "Return ErrEmpty", Steps: []string{"add the check", "add a test"}, Files: []string{"parse.go"}, TestStrategy: "go test"},
		Attempt:     2,
		MaxAttempts: 3,
		Feedback:    "--- FAIL: TestParseEmpty\n    parse_test.go:12: got panic",
	}
	_, err := c.Execute(t.Context(), newFakeFS(nil), req, nil)
	require.NoError(t, err)
	prompt := f.Requests()[0].Messages[1].Content
	assert.Equal(t, BuildExecutorPrompt(req), prompt)
	for _, s := range []string{"Task 7: Fix Parse for empty input", "Attempt 2 of 3", "--- FAIL: TestParseEmpty", "parse_test.go:12: got panic",
		"1. add the check\n2. add a test", "Files: parse.go", "Return ErrEmpty"} {
		assert.Contains(t, prompt, s)
	}
}

func TestBuildExecutorPrompt(t *testing.T) {
	tests := []struct {
		name    string
		req     ExecRequest
		want    []string
		notWant []string
	}{
		{"first attempt", ExecRequest{Task: testTask, Attempt: 1, MaxAttempts: 3}, []string{"Attempt 1 of 3", "first attempt"}, []string{"## Plan", "did not pass"}},
		{"zero attempt counts as one", ExecRequest{Task: testTask}, []string{"Attempt 1 of 1"}, nil},
		{"retry with feedback", ExecRequest{Task: testTask, Attempt: 3, MaxAttempts: 3, Feedback: "lint: unused x"}, []string{"Attempt 3 of 3", "did not pass verification", "lint: unused x"}, []string{"first attempt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := BuildExecutorPrompt(tt.req)
			for _, w := range tt.want {
				assert.Contains(t, got, w)
			}
			for _, w := range tt.notWant {
				assert.NotContains(t, got, w)
			}
		})
	}
}

func TestExecuteNeverSendsTheAPIKey(t *testing.T) {
	f := llmtest.NewServer(t,
		llmtest.ToolCalls(5, llmtest.Call{Name: "read_file", Arguments: `{"path":".env"}`}),
		llmtest.ToolCalls(5, llmtest.Finish("done")),
		llmtest.Error(401, "Incorrect API key provided: "+testKey, "invalid_api_key"),
	)
	logs := &logRecorder{}
	c, _ := newTestClient(t, f, func(cfg *Config) { cfg.Logf = logs.logf })
	req := execReq
	req.Feedback = "TestEnv failed: OPENAI_API_KEY=" + testKey + " hex " + hex.EncodeToString([]byte(testKey))
	env := "OPENAI_API_KEY=" + testKey + "\nB64=" + base64.StdEncoding.EncodeToString([]byte("x=OPENAI_API_KEY="+testKey+"\x00")) +
		"\nREV=" + reverse(testKey) + "\nURL=" + url.QueryEscape(testKey) + "\n"
	_, err := c.Execute(t.Context(), newFakeFS(map[string]string{".env": env}), req, nil)
	require.NoError(t, err)
	_, _, err = c.Plan(t.Context(), TaskInfo{ID: "8", Details: "key " + testKey}, "", nil)
	require.ErrorIs(t, err, ErrAuth)
	assert.NotContains(t, err.Error(), testKey)
	assert.NotContains(t, fmt.Sprintf("%v %+v", err, errors.Unwrap(err)), testKey)
	bodies := f.RawBodies()
	require.Len(t, bodies, 3)
	for i, b := range bodies {
		for _, form := range secret.Forms(testKey) {
			assert.NotContains(t, b, form, "request %d", i)
		}
	}
	assert.Contains(t, bodies[1], "OPENAI_API_KEY=[REDACTED]", "the file's content reached the model, scrubbed")
	assert.Contains(t, bodies[1], "REV=[REDACTED]", "the reversed key was scrubbed")
	for _, l := range logs.lines() {
		assert.NotContains(t, l, testKey)
	}
	for _, h := range f.AuthHeaders() {
		assert.Equal(t, "Bearer "+testKey, h)
	}
}

func reverse(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}
