package llm_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	openai "github.com/sashabaranov/go-openai"

	"github.com/statgraph/statgraph/agents/llm"
)

// server answers every chat completion with content, using 42 tokens.
func server(content string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":%q}}],"usage":{"prompt_tokens":30,"completion_tokens":12,"total_tokens":42}}`, content)
	}))
}

func ExampleClient_Chat() {
	srv := server("Hello!")
	defer srv.Close()

	c, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Model: "llama3"})
	if err != nil {
		fmt.Println(err)
		return
	}
	budget := llm.NewBudget(1000, nil)
	resp, err := c.Chat(context.Background(), openai.ChatCompletionRequest{
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "Say hello"}},
	}, budget)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Choices[0].Message.Content, budget.Spent())
	// Output: Hello! 42
}

func ExampleClient_Plan() {
	srv := server("```json\n" + `{"summary":"Add a nil check","steps":["check for nil in Parse"],"files":["parse.go"],"test_strategy":"go test ./..."}` + "\n```")
	defer srv.Close()

	c, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Model: "llama3"})
	if err != nil {
		fmt.Println(err)
		return
	}
	plan, usage, err := c.Plan(context.Background(), llm.TaskInfo{ID: "1", Title: "Fix the nil panic"}, "parse.go  1.2 KiB\n", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(plan.Summary, plan.Steps, plan.Files, usage.Total)
	// Output: Add a nil check [check for nil in Parse] [parse.go] 42
}

func ExampleNew() {
	_, err := llm.New(llm.Config{})
	fmt.Println(errors.Is(err, llm.ErrNoModel))
	fmt.Println(err)
	// Output:
	// true
	// llm: no model configured: pass --model, set STATGRAPH_MODEL, or give the task a "model" field
}

func ExampleBudget_Check() {
	global := llm.NewBudget(10_000, nil)
	task := llm.NewBudget(500, global)
	task.Add(llm.Usage{Prompt: 400, Completion: 120, Total: 520})
	fmt.Println(task.Check(0))
	fmt.Println(global.Spent())
	// Output:
	// llm: budget exhausted: task budget of 500 tokens spent (520 used); raise budget_tokens or lower the work per task
	// 520
}

func ExampleRepoView() {
	root, err := os.MkdirTemp("", "repoview")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(root)
	for name, content := range map[string]string{"go.mod": "module x\n", "cmd/x/main.go": "package main\n"} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fmt.Println(err)
			return
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			fmt.Println(err)
			return
		}
	}
	view, err := llm.RepoView(root, 100)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, _ = io.WriteString(os.Stdout, view)
	// Output:
	// cmd/
	//   x/
	//     main.go  13 B
	// go.mod  9 B
}

func ExampleBuildExecutorPrompt() {
	fmt.Print(llm.BuildExecutorPrompt(llm.ExecRequest{
		Task:        llm.TaskInfo{ID: "3", Title: "Fix Parse"},
		Plan:        llm.Plan{Summary: "Handle empty input", Steps: []string{"return ErrEmpty"}},
		Attempt:     2,
		MaxAttempts: 3,
		Feedback:    "--- FAIL: TestParseEmpty",
	}))
	// Output:
	// ## Task 3: Fix Parse
	//
	// ## Plan
	// Handle empty input
	//
	// Steps:
	// 1. return ErrEmpty
	//
	// ## Attempt 2 of 3
	// The previous attempt did not pass verification. Fix these problems first:
	//
	// --- FAIL: TestParseEmpty
}
