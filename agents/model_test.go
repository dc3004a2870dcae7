package agents

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/llm/llmtest"
	"github.com/statgraph/statgraph/statgraph"
)

// TestModelServerTrouble runs the graph against a model server that
// misbehaves: the llm client's retries, typed errors and budgets must end
// the task cleanly, with an error that says why.
func TestModelServerTrouble(t *testing.T) {
	t.Parallel()
	always500 := func(openai.ChatCompletionRequest) llmtest.Reply {
		return llmtest.Error(http.StatusInternalServerError, "the server had an error", "")
	}
	for _, tc := range []struct {
		name     string
		answers  []llmtest.Reply
		next     llmtest.ReplyFunc
		budget   int
		requests int
		err      error           // nil: the task must pass
		errText  string          // what the error says
		waits    []time.Duration // the exact waits of a task that passes
		retries  int             // how many waits a failing task asked for
	}{{
		name: "429 with Retry-After then success",
		answers: []llmtest.Reply{
			llmtest.Error(http.StatusTooManyRequests, "rate limit reached", "").WithHeader("Retry-After", "1"),
			planAnswer(), fixAnswer,
		},
		requests: 3, waits: []time.Duration{time.Second},
	}, {
		name: "endless 500s", next: always500,
		requests: 3, err: llm.ErrServer, errText: "HTTP 500, 3 attempts", retries: 2,
	}, {
		name:     "401",
		answers:  []llmtest.Reply{llmtest.Error(http.StatusUnauthorized, "Incorrect API key provided", "")},
		requests: 1, err: llm.ErrAuth, errText: "HTTP 401",
	}, {
		name: "budget spent mid-task",
		answers: []llmtest.Reply{
			planAnswer(),
			llmtest.ToolCalls(tokensPerCall, llmtest.WriteFile("add.go", stillWrong)),
			llmtest.ToolCalls(tokensPerCall, llmtest.WriteFile("notes.txt", "thinking")),
		},
		budget: 250, requests: 3, err: llm.ErrBudget, errText: "task budget of 250 tokens spent (300 used)",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var budget *llm.Budget
			if tc.budget > 0 {
				budget = llm.NewBudget(tc.budget, nil)
			}
			r := newRig(t, "t5", rigOptions{checks: grepCheck(), budget: budget}, tc.answers...)
			r.srv.SetFallback(tc.next)
			out, err := r.run(t, "t5", 3)
			assert.Equal(t, tc.requests, r.srv.Count(), "requests made")
			if tc.err == nil {
				require.NoError(t, err)
				assert.Equal(t, PhaseDone, out.Phase)
				assert.Equal(t, tc.waits, r.sleeps.Waits(), "the client waits as Retry-After asks")
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.err)
			assert.ErrorContains(t, err, tc.errText)
			assert.ErrorContains(t, err, "t5", "the error names the task")
			var ne *statgraph.NodeError
			require.True(t, errors.As(err, &ne), "a node error: %v", err)
			assert.Nil(t, ne.Panic)
			assert.Len(t, r.sleeps.Waits(), tc.retries, "a wait before each retry and no retry of errors it cannot fix")
			if budget != nil {
				assert.LessOrEqual(t, budget.Spent(), tc.budget+100, "spend passes the budget by at most one call")
				assert.Equal(t, NodeExecutor, ne.Node)
			}
		})
	}
}

// TestToolEscapeRefused has the model write ../outside.txt: the workspace
// FS refuses, the refusal goes back to the model as the tool result, and
// the model goes on to fix the bug.
func TestToolEscapeRefused(t *testing.T) {
	t.Parallel()
	r := newRig(t, "t8", rigOptions{checks: grepCheck()},
		planAnswer(),
		llmtest.ToolCalls(tokensPerCall, llmtest.WriteFile("../outside.txt", "escaped")),
		fixAnswer,
	)
	out, err := r.run(t, "t8", 3)
	require.NoError(t, err)
	assert.Equal(t, PhaseDone, out.Phase)

	outside := filepath.Join(r.ws.Dir(), "..", "outside.txt")
	_, statErr := os.Stat(outside)
	assert.ErrorIs(t, statErr, os.ErrNotExist, "%s must not be created", outside)

	reqs := r.srv.Requests()
	require.Len(t, reqs, 3)
	msgs := reqs[2].Messages
	last := msgs[len(msgs)-1]
	assert.Equal(t, openai.ChatMessageRoleTool, last.Role)
	assert.Equal(t, "call_1", last.ToolCallID)
	assert.True(t, strings.HasPrefix(last.Content, "error: "), "tool result: %q", last.Content)
	assert.Contains(t, last.Content, "../outside.txt")
	assert.Contains(t, last.Content, "escapes the workspace")
}

// TestPlanRepair checks the planner's one repair round through the graph.
func TestPlanRepair(t *testing.T) {
	t.Parallel()
	t.Run("invalid then valid", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, "t9", rigOptions{checks: grepCheck()}, llmtest.Text("Sure! Here is my plan: fix it.", tokensPerCall), planAnswer(), fixAnswer)
		out, err := r.run(t, "t9", 3)
		require.NoError(t, err)
		assert.Equal(t, PhaseDone, out.Phase)
		assert.Equal(t, []string{"add.go"}, out.Plan.Files)
		reqs := r.srv.Requests()
		require.Len(t, reqs, 3)
		repair := reqs[1].Messages
		assert.Greater(t, len(repair), len(reqs[0].Messages), "the repair round continues the conversation")
		assert.Equal(t, "Sure! Here is my plan: fix it.", repair[len(repair)-2].Content, "the bad answer is shown back")
		assert.Contains(t, strings.ToLower(repair[len(repair)-1].Content), "json", "the parse error goes back to the model")
	})
	t.Run("invalid twice", func(t *testing.T) {
		t.Parallel()
		r := newRig(t, "t9", rigOptions{checks: grepCheck()}, llmtest.Text("no plan", tokensPerCall), llmtest.Text(`{"summary": "half`, tokensPerCall))
		_, err := r.run(t, "t9", 3)
		require.Error(t, err)
		assert.ErrorIs(t, err, llm.ErrInvalidPlan)
		assert.ErrorContains(t, err, "plan task t9")
		assert.Equal(t, 2, r.srv.Count(), "the executor never runs")
	})
}
