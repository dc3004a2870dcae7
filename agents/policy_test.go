package agents

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/gate"
	"github.com/statgraph/statgraph/verifier"
)

// TestOrchestratorAndGateSharePolicy: one gate.Policy value drives both the
// library's gate and the orchestrator. should_retry_or_end routes as
// Policy.Decide says, and an exhausted task escalates with the gate's
// Escalation and answers: "skip" continues past the check with a warning
// through both, and an unknown answer asks again through both, with the
// same Invalid message.
func TestOrchestratorAndGateSharePolicy(t *testing.T) {
	ctx := context.Background()
	for _, p := range []gate.Policy{{MaxAttempts: 1, OnExhausted: gate.Ask}, {MaxAttempts: 3}, {MaxAttempts: 2, OnExhausted: gate.Ask}} {
		s := stateFor(p)
		require.Equal(t, p, s.Policy())
		for attempts := 0; attempts <= 4; attempts++ {
			for _, passed := range []bool{false, true} {
				s.RetryCount = attempts
				s.Verification = verifier.Verification{TestsPassed: passed, LintPassed: passed}
				want := map[gate.Decision]string{gate.Passed: RouteDone, gate.Retry: RouteRetry, gate.Failed: RouteFailed, gate.Escalate: RouteFailed}[p.Decide(passed, attempts, attempts)]
				assert.Equal(t, want, ShouldRetryOrEnd(ctx, s), "%+v attempts %d passed %v", p, attempts, passed)
			}
		}
	}

	policy := gate.Policy{MaxAttempts: 1, OnExhausted: gate.Ask}

	// The orchestrator, its check failing.
	orch, err := NewGraph(Config{
		Executor: ExecutorFunc(func(context.Context, TaskState) (string, error) { return "tried", nil }),
		Verifier: VerifierFunc(func(context.Context, TaskState) (verifier.Verification, error) {
			return verifier.Verification{Errors: []string{"tests: still wrong"}}, nil
		}),
	}, statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(true)))
	require.NoError(t, err)

	// A library gate with the same policy, its check failing.
	type doc struct {
		Done bool
		Gate gate.State
	}
	gs := gate.For(func(s *doc) *gate.State { return &s.Gate })
	b := statgraph.New[doc]().AddNode("write", func(_ context.Context, s doc) (doc, error) { return s, nil })
	gs.AddValidator(b, "tests", func(context.Context, doc) (gate.Verdict, error) {
		return gate.Verdict{Feedback: "still wrong"}, nil
	})
	gs.Add(b, "gate", gate.Config{Validators: []string{"tests"}, RetryTarget: "write", Next: "done", Policy: policy})
	b.AddNode("done", func(_ context.Context, s doc) (doc, error) { s.Done = true; return s, nil }).
		AddEdge(statgraph.Start, "write").AddEdge("write", "tests").AddEdge("tests", "gate").AddEdge("done", statgraph.End)
	lib, err := b.Compile(statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(true)))
	require.NoError(t, err)

	// paused is the escalation of a run that returned err and paused at
	// the interrupts ints (reported by WithResult).
	paused := func(err error, ints []statgraph.Interruption) Escalation {
		t.Helper()
		require.ErrorIs(t, err, statgraph.ErrInterrupted, "the run pauses")
		require.NotEmpty(t, ints)
		var esc Escalation
		require.NoError(t, json.Unmarshal(ints[0].Payload, &esc))
		return esc
	}
	for _, thread := range []string{"skip", "maybe"} {
		var ores statgraph.Result[TaskState]
		_, err = orch.Invoke(ctx, stateFor(policy), statgraph.WithThread(thread), statgraph.WithResult(&ores))
		oesc := paused(err, ores.Interrupts)
		var gres statgraph.Result[doc]
		_, err = lib.Invoke(ctx, doc{}, statgraph.WithThread(thread), statgraph.WithResult(&gres))
		gesc := paused(err, gres.Interrupts)
		for _, esc := range []Escalation{oesc, gesc} {
			assert.Equal(t, 1, esc.Attempts)
			assert.Equal(t, gate.Choices(), esc.Choices)
			assert.Equal(t, gate.EscalationHint, esc.Hint)
			assert.Len(t, esc.Errors, 1)
		}
	}

	out, err := orch.Invoke(ctx, TaskState{}, statgraph.WithThread("skip"), statgraph.WithResume("skip"))
	require.NoError(t, err)
	assert.Equal(t, PhaseSkipped, out.Phase)
	assert.Nil(t, out.FailedAt)
	assert.Equal(t, []string{"task t-policy skipped by operator after 1 failed attempts"}, out.Warnings)
	done, err := lib.Invoke(ctx, doc{}, statgraph.WithThread("skip"), statgraph.WithResume("skip"))
	require.NoError(t, err)
	assert.True(t, done.Done, "the gate continues downstream")
	require.Len(t, done.Gate.Warnings, 1)
	assert.Equal(t, "gate skipped after 1 failed attempts: tests", done.Gate.Warnings[0].Message)

	var ores statgraph.Result[TaskState]
	_, err = orch.Invoke(ctx, TaskState{}, statgraph.WithThread("maybe"), statgraph.WithResume("maybe"), statgraph.WithResult(&ores))
	oasked := paused(err, ores.Interrupts)
	var gres statgraph.Result[doc]
	_, err = lib.Invoke(ctx, doc{}, statgraph.WithThread("maybe"), statgraph.WithResume("maybe"), statgraph.WithResult(&gres))
	gasked := paused(err, gres.Interrupts)
	assert.Equal(t, `unknown answer "maybe": resume with retry, skip or abort`, gasked.Invalid)
	assert.Equal(t, gasked.Invalid, oasked.Invalid, "the orchestrator asks again as the gate does, in the same words")
}

// stateFor is a task whose fields give policy p.
func stateFor(p gate.Policy) TaskState {
	s := TaskState{Task: Task{ID: "t-policy", Title: "policy"}, MaxRetries: p.MaxAttempts}
	if p.OnExhausted == gate.Ask {
		s.Task.OnExhausted = "ask"
	}
	return s
}
