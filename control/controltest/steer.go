package controltest

import (
	"fmt"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

// ApprovalPlan is a plan whose one task (the LLM executor) has its plan
// approved by a person (approve_plan) before SteerModel executes it.
const ApprovalPlan = `{"tasks": [
  {"id": 1, "title": "write out", "approve_plan": true, "test_cmd": "grep -q attempt out.txt"}
]}
`

// SteerPlan is the summary of the plan SteerModel's planner gives.
const SteerPlan = "the model's plan: write out.txt"

// SteerModel is the scripted model of the plan-approval and review tests:
// the planner gets a plan whose summary is SteerPlan, and each executor
// turn writes "attempt <n>" to out.txt and finishes. The server records
// the requests (Requests). It is safe for concurrent use.
type SteerModel struct {
	*llmtest.Server
	mu     sync.Mutex
	writes int
}

// NewSteerModel starts a SteerModel that ends with the test.
func NewSteerModel(t testing.TB) *SteerModel {
	m := &SteerModel{Server: llmtest.NewServer(t)}
	m.SetFallback(func(req openai.ChatCompletionRequest) llmtest.Reply {
		if len(req.Tools) == 0 {
			return llmtest.Text(`{"summary":"`+SteerPlan+`","steps":["write it"],"files":["out.txt"],"test_strategy":"grep"}`, 7)
		}
		if req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleTool {
			return llmtest.ToolCalls(3, llmtest.Finish("wrote out.txt"))
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		m.writes++
		return llmtest.ToolCalls(11, llmtest.WriteFile("out.txt", fmt.Sprintf("attempt %d\n", m.writes)))
	})
	return m
}

// Config is the client configuration that talks to m.
func (m *SteerModel) Config() llm.Config {
	return llm.Config{BaseURL: m.BaseURL(), Model: llmtest.Model, HTTPClient: m.Client()}
}

// Env is the environment that points the built binary at m.
func (m *SteerModel) Env() []string {
	return []string{"STATGRAPH_MODEL=" + llmtest.Model, "OPENAI_BASE_URL=" + m.BaseURL()}
}

// ExecutorPrompts returns the first user message of each executor call
// (a request with tools whose last message is not a tool result): the
// prompt with the plan and the feedback.
func (m *SteerModel) ExecutorPrompts() []string {
	var out []string
	for _, r := range m.Requests() {
		if len(r.Tools) == 0 || r.Messages[len(r.Messages)-1].Role == openai.ChatMessageRoleTool {
			continue
		}
		for _, msg := range r.Messages {
			if msg.Role == openai.ChatMessageRoleUser {
				out = append(out, msg.Content)
				break
			}
		}
	}
	return out
}

// PlannerCalls counts the planner's requests.
func (m *SteerModel) PlannerCalls() int {
	n := 0
	for _, r := range m.Requests() {
		if len(r.Tools) == 0 {
			n++
		}
	}
	return n
}
