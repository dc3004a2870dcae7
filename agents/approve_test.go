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

type countingPlanner struct{ calls int }

func (p *countingPlanner) Plan(context.Context, TaskState) (Plan, error) {
	p.calls++
	return Plan{Summary: "the model's plan", Steps: []string{"write it"}}, nil
}

// TestApprovePlan pauses a task with ApprovePlan after the planner with
// its plan as the question's proposal; the answer decides: approve runs
// the executor with the model's plan, edit with the edited one, reject
// ends the task cancelled with the reason and never runs the executor.
// The planner runs once, however the question is answered.
func TestApprovePlan(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		reply    gate.Reply
		phase    string
		executed string // the plan summary the executor got; "" when it did not run
	}{
		{reply: gate.Reply{Answer: gate.AnswerApprove}, phase: PhaseDone, executed: "the model's plan"},
		{reply: gate.Reply{Answer: gate.AnswerEdit, Text: `{"summary": "the person's plan", "steps": ["do it right"]}`}, phase: PhaseDone, executed: "the person's plan"},
		{reply: gate.Reply{Answer: gate.AnswerReject, Text: "out of scope"}, phase: PhaseCancelled},
	} {
		t.Run(string(tc.reply.Answer), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			planner := &countingPlanner{}
			var executed []string
			g, err := NewGraph(Config{
				Planner: planner,
				Executor: ExecutorFunc(func(_ context.Context, s TaskState) (string, error) {
					executed = append(executed, s.Plan.Summary)
					return "ok", nil
				}),
				Verifier: VerifierFunc(func(context.Context, TaskState) (verifier.Verification, error) {
					return verifier.Verification{TestsPassed: true, LintPassed: true}, nil
				}),
			}, statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(true)))
			require.NoError(t, err)
			in := TaskState{Task: task("t-plan")}
			in.Task.ApprovePlan = true
			var res statgraph.Result[TaskState]
			_, err = g.Invoke(ctx, in, statgraph.WithThread("p"), statgraph.WithResult(&res))
			require.ErrorIs(t, err, statgraph.ErrInterrupted, "the run pauses after the planner")
			require.Len(t, res.Interrupts, 1)
			assert.Equal(t, NodeApprove, res.Interrupts[0].Node)
			var esc Escalation
			require.NoError(t, json.Unmarshal(res.Interrupts[0].Payload, &esc))
			assert.Equal(t, gate.KindApproval, esc.Kind)
			assert.Equal(t, "t-plan", esc.Task)
			assert.Contains(t, esc.Proposal, `"summary": "the model's plan"`)
			assert.Empty(t, executed, "nothing runs before the answer")

			out, err := g.Invoke(ctx, TaskState{}, statgraph.WithThread("p"), statgraph.WithResume(tc.reply))
			require.NoError(t, err)
			assert.Equal(t, tc.phase, out.Phase)
			assert.Equal(t, 1, planner.calls, "the plan is not asked for again")
			if tc.executed == "" {
				assert.Empty(t, executed)
				assert.Equal(t, "reject", out.Decision)
				assert.Equal(t, "plan rejected by the operator: out of scope", out.Cancelled)
				assert.Equal(t, []string{out.Cancelled}, out.ErrorHistory)
				return
			}
			assert.Equal(t, []string{tc.executed}, executed)
		})
	}
}

// A task without ApprovePlan goes from the planner to the executor
// without a pause.
func TestNoApprovalByDefault(t *testing.T) {
	t.Parallel()
	g, err := NewGraph(Config{
		Planner:  &countingPlanner{},
		Executor: ExecutorFunc(func(context.Context, TaskState) (string, error) { return "ok", nil }),
		Verifier: VerifierFunc(func(context.Context, TaskState) (verifier.Verification, error) {
			return verifier.Verification{TestsPassed: true, LintPassed: true}, nil
		}),
	}, statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(true)))
	require.NoError(t, err)
	out, err := g.Invoke(context.Background(), TaskState{Task: task("t")}, statgraph.WithThread("n"))
	require.NoError(t, err)
	assert.Equal(t, PhaseDone, out.Phase)
}

func TestParsePlan(t *testing.T) {
	t.Parallel()
	p, err := ParsePlan("  just do the obvious thing \n")
	require.NoError(t, err)
	assert.Equal(t, Plan{Summary: "just do the obvious thing"}, p)
	p, err = ParsePlan(`{"summary": "s", "steps": ["a"], "files": ["x.go"], "test_strategy": "go test"}`)
	require.NoError(t, err)
	assert.Equal(t, Plan{Summary: "s", Steps: []string{"a"}, Files: []string{"x.go"}, TestStrategy: "go test"}, p)
	for _, bad := range []string{"", "   ", `{"summary": `, `{"sumary": "typo"}`, `{"files": ["x"]}`} {
		_, err := ParsePlan(bad)
		assert.Error(t, err, "%q", bad)
	}
}
