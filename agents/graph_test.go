package agents

import (
	"context"
	"fmt"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/internal/gittest"
	"github.com/statgraph/statgraph/verifier"
)

func TestShouldRetryOrEnd(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    TaskState
		want string
	}{
		{"passed", TaskState{Verification: verifier.Verification{TestsPassed: true, LintPassed: true}, RetryCount: 3, MaxRetries: 3}, RouteDone},
		{"tests failed, retries left", TaskState{Verification: verifier.Verification{LintPassed: true}, RetryCount: 1, MaxRetries: 3}, RouteRetry},
		{"lint failed, retries left", TaskState{Verification: verifier.Verification{TestsPassed: true}, RetryCount: 2, MaxRetries: 3}, RouteRetry},
		{"retries spent", TaskState{Verification: verifier.Verification{LintPassed: true}, RetryCount: 3, MaxRetries: 3}, RouteFailed},
		{"zero MaxRetries means the default", TaskState{RetryCount: DefaultMaxRetries - 1}, RouteRetry},
		{"default spent", TaskState{RetryCount: DefaultMaxRetries}, RouteFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ShouldRetryOrEnd(context.Background(), tc.s))
		})
	}
}

func TestNewGraphNeedsExecutorAndVerifier(t *testing.T) {
	_, err := NewGraph(Config{Executor: ExecutorFunc(func(context.Context, TaskState) (string, error) { return "", nil })})
	require.ErrorContains(t, err, "needs an Executor and a Verifier")
	_, err = NewGraph(Config{Verifier: ChecksVerifier{}})
	require.ErrorContains(t, err, "needs an Executor and a Verifier")
}

// attemptN writes add.go still wrong, differently each time, so every
// attempt makes progress and fails.
func attemptN(n int) llmtest.Reply {
	src := strings.Replace(stillWrong, "(first try)", fmt.Sprintf("(try %d)", n), 1)
	return llmtest.ToolCalls(tokensPerCall, llmtest.WriteFile("add.go", src), llmtest.Finish(fmt.Sprintf("try %d", n)))
}

// attemptPrompts returns the user prompt of the first turn of every executor
// attempt, in order: requests that offer tools and carry only the system
// and user messages.
func attemptPrompts(reqs []openai.ChatCompletionRequest) []string {
	var out []string
	for _, r := range reqs {
		if len(r.Tools) > 0 && len(r.Messages) == 2 {
			out = append(out, r.Messages[1].Content)
		}
	}
	return out
}

var fixAnswer = llmtest.ToolCalls(tokensPerCall, llmtest.WriteFile("add.go", fixedAdd), llmtest.Finish("Add adds now"))

// TestRetryLoop runs the whole graph with the LLM planner and executor on a
// scripted model, a real workspace and real go test and go vet checks, and
// checks note 002's semantics.
func TestRetryLoop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		answers    []llmtest.Reply
		maxRetries int
		retries    int
		phase      string
		history    []string // what each ErrorHistory entry contains after "Retry k: "
		check      func(t *testing.T, r *rig, out TaskState)
	}{{
		name:    "pass on the first try",
		answers: []llmtest.Reply{planAnswer(), fixAnswer}, maxRetries: 3,
		retries: 1, phase: PhaseDone,
		check: func(t *testing.T, r *rig, out TaskState) {
			assert.Nil(t, out.FailedAt)
			assert.Equal(t, "make Add add", out.Plan.Summary)
			require.Len(t, out.Attempts, 1)
			assert.True(t, out.Attempts[0].Passed)
			assert.Equal(t, "Add adds now", out.Attempts[0].Summary)
			assert.NotEmpty(t, out.Attempts[0].Commit)
			assert.Equal(t, 200, out.Tokens, "one planner and one executor call of 100 tokens each")
		},
	}, {
		name:    "fail once then pass",
		answers: []llmtest.Reply{planAnswer(), attemptN(1), fixAnswer}, maxRetries: 3,
		retries: 2, phase: PhaseDone, history: []string{"TestAdd"},
		check: func(t *testing.T, r *rig, out TaskState) {
			prompts := attemptPrompts(r.srv.Requests())
			require.Len(t, prompts, 2)
			assert.Contains(t, prompts[0], "Attempt 1 of 3")
			assert.Contains(t, prompts[1], "Attempt 2 of 3")
			assert.Contains(t, prompts[1], "TestAdd", "the retry prompt names the failing test")
			assert.NotContains(t, prompts[0], "TestAdd")
			grown := len(prompts[1]) - len(prompts[0])
			assert.Positive(t, grown)
			assert.LessOrEqual(t, grown, feedbackCap+200, "the feedback in the retry prompt stays under the cap")
			assert.Contains(t, prompts[1], out.Attempts[0].Feedback)
		},
	}, {
		name:    "fail three times",
		answers: []llmtest.Reply{planAnswer(), attemptN(1), attemptN(2), attemptN(3)}, maxRetries: 3,
		retries: 3, phase: PhaseFailed, history: []string{"TestAdd", "TestAdd", "TestAdd"},
		check: func(t *testing.T, r *rig, out TaskState) {
			require.NotNil(t, out.FailedAt)
			assert.False(t, out.FailedAt.IsZero())
			assert.Contains(t, r.log.String(), "task t-3 FAILED after 3 attempts")
			assert.Len(t, out.Attempts, 3)
		},
	}, {
		name:    "lint passes, tests fail",
		answers: []llmtest.Reply{planAnswer(), attemptN(1), fixAnswer}, maxRetries: 3,
		retries: 2, phase: PhaseDone, history: []string{"tests"},
		check: func(t *testing.T, r *rig, out TaskState) {
			assert.NotContains(t, out.ErrorHistory[0], "lint")
		},
	}, {
		name: "tests pass, lint fails",
		answers: []llmtest.Reply{
			planAnswer(),
			llmtest.ToolCalls(tokensPerCall, llmtest.WriteFile("add.go", fixedAdd), llmtest.WriteFile("twice.go", vetBad), llmtest.Finish("fixed Add, added Twice")),
			llmtest.ToolCalls(tokensPerCall, llmtest.WriteFile("twice.go", vetOK), llmtest.Finish("fixed Twice")),
		},
		maxRetries: 3, retries: 2, phase: PhaseDone, history: []string{"lint"},
		check: func(t *testing.T, r *rig, out TaskState) {
			assert.NotContains(t, out.ErrorHistory[0], "tests")
			assert.Contains(t, attemptPrompts(r.srv.Requests())[1], "twice.go", "the lint finding's file reaches the model")
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			id := fmt.Sprintf("t-%d", tc.retries)
			r := newRig(t, id, rigOptions{}, tc.answers...)
			out, err := r.run(t, id, tc.maxRetries)
			require.NoError(t, err)
			assert.Equal(t, tc.phase, out.Phase)
			assert.Equal(t, tc.retries, out.RetryCount)
			require.Len(t, out.ErrorHistory, len(tc.history), "history: %q", out.ErrorHistory)
			for k, want := range tc.history {
				assert.True(t, strings.HasPrefix(out.ErrorHistory[k], fmt.Sprintf("Retry %d: ", k)), "entry %d: %q", k, out.ErrorHistory[k])
				assert.Contains(t, out.ErrorHistory[k], want)
			}
			assert.Equal(t, len(tc.answers)-1, len(attemptPrompts(r.srv.Requests())), "one executor call per attempt")
			var numbers []int
			for _, a := range out.Attempts {
				numbers = append(numbers, a.N)
			}
			assertCommits(t, r.ws, numbers...)
			tc.check(t, r, out)
		})
	}
}

// assertCommits checks that the task branch has exactly one commit for
// each of attempts (oldest first) on top of the source's commit.
func assertCommits(t *testing.T, ws *workspace.Workspace, attempts ...int) {
	t.Helper()
	log := gittest.Git(t, ws.Dir(), "log", "--format=%s", ws.Branch())
	lines := strings.Split(log, "\n")
	require.Len(t, lines, len(attempts)+1, "git log: %s", log)
	for i, n := range attempts {
		assert.Contains(t, lines[len(attempts)-1-i], fmt.Sprintf(": attempt %d: ", n))
	}
}
