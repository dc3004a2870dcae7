package llm

import (
	"strings"
	"testing"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

// BenchmarkBuildExecutorPrompt measures the prompt of a retry with a plan
// and 8 KiB of feedback.
func BenchmarkBuildExecutorPrompt(b *testing.B) {
	req := ExecRequest{
		Task:        testTask,
		Plan:        Plan{Summary: "s", Steps: []string{"a", "b", "c"}, Files: []string{"parse.go"}, TestStrategy: "go test"},
		Attempt:     2,
		MaxAttempts: 3,
		Feedback:    strings.Repeat("--- FAIL: TestParse\n", 400),
	}
	for b.Loop() {
		_ = BuildExecutorPrompt(req)
	}
}

// BenchmarkExecute measures the client side of one executor attempt of two
// turns (write_file, then finish) against a local server that answers at once.
func BenchmarkExecute(b *testing.B) {
	f := llmtest.NewServer(b)
	turns := []llmtest.Reply{
		llmtest.ToolCalls(10, llmtest.WriteFile("a.go", "package a\n")),
		llmtest.ToolCalls(10, llmtest.Finish("done")),
	}
	c, _ := newTestClient(b, f, nil)
	fsys := newFakeFS(nil)
	for b.Loop() {
		f.Reset(turns...)
		if _, err := c.Execute(b.Context(), fsys, execReq, nil); err != nil {
			b.Fatal(err)
		}
	}
}
