package tests

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
)

// twoApprovalTasks are two tasks whose plans wait for approval.
const twoApprovalTasks = `{"tasks": [
  {"id": 1, "title": "write out one", "approve_plan": true, "test_cmd": "grep -q attempt out.txt"},
  {"id": 2, "title": "write out two", "approve_plan": true, "test_cmd": "grep -q attempt out.txt"}
]}
`

// Plan approval end to end through the built binary's MCP server over its
// stdio transport: run_pending starts the run, list_tasks shows both tasks
// awaiting approval (phase "awaiting-approval" at node "approve", with the
// model's plan as the question's proposal), answer_escalation approves
// task 1 and edits task 2's plan; the run ends with both done, task 1's
// executor given the model's plan and task 2's the edited one.
func TestPlanApprovalThroughMCP(t *testing.T) {
	t.Parallel()
	m := controltest.NewSteerModel(t)
	repo := newRepo(t, map[string]string{"tasks.json": twoApprovalTasks})
	cs, stderr := mcpSessionEnv(t, repo, m.Env(), noSandbox, filepath.Join(repo, "tasks.json"))
	defer cs.Close()
	var started json.RawMessage
	mcpCall(t, cs, "run_pending", map[string]any{}, &started)

	var list struct {
		Tasks []control.TaskInfo `json:"tasks"`
	}
	waiting := func() bool {
		list.Tasks = nil
		mcpCall(t, cs, "list_tasks", map[string]any{}, &list)
		n := 0
		for _, ti := range list.Tasks {
			if ti.Question != nil {
				n++
			}
		}
		return n == 2
	}
	for deadline := time.Now().Add(90 * time.Second); !waiting(); time.Sleep(100 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "both plans never waited for approval; stderr:\n%s", stderr)
	}
	for _, ti := range list.Tasks {
		assert.Equal(t, "approval", ti.Question.Kind, "task %s", ti.ID)
		assert.Contains(t, ti.Question.Proposal, controltest.SteerPlan, "task %s", ti.ID)
		assert.Equal(t, "awaiting-approval", ti.Phase, "task %s's phase", ti.ID)
		assert.Equal(t, "approve", ti.Node, "task %s's node", ti.ID)
	}
	assert.Empty(t, m.ExecutorPrompts(), "nothing runs before a plan is approved")

	edited := `{"summary": "the person's plan: write out.txt for two", "steps": ["write it"]}`
	var answered json.RawMessage
	mcpCall(t, cs, "answer_escalation", map[string]any{"id": "1", "answer": "approve"}, &answered)
	mcpCall(t, cs, "answer_escalation", map[string]any{"id": "2", "answer": "edit", "text": edited}, &answered)
	st := mcpWaitRun(t, cs)
	require.False(t, st.Run.Running, "the run did not end; stderr:\n%s", stderr)
	assert.Equal(t, 2, st.Counts["done"], "both tasks done; stderr:\n%s", stderr)

	prompts := m.ExecutorPrompts()
	require.Len(t, prompts, 2)
	for _, p := range prompts {
		switch {
		case strings.Contains(p, "write out one"):
			assert.Contains(t, p, controltest.SteerPlan, "task 1 approved: the model's plan")
		case strings.Contains(p, "write out two"):
			assert.Contains(t, p, "the person's plan: write out.txt for two", "task 2 edited: the person's plan")
			assert.NotContains(t, p, controltest.SteerPlan, "the edited plan replaces the model's")
		default:
			t.Errorf("a prompt of neither task:\n%s", p)
		}
	}
	assert.Equal(t, 2, m.PlannerCalls(), "each plan made once")
}

// A run with no terminal leaves a task whose plan waits for approval
// interrupted; status shows it awaiting approval (not planning), in its
// table and in --json.
func TestStatusAwaitingApproval(t *testing.T) {
	t.Parallel()
	m := controltest.NewSteerModel(t)
	repo := newRepo(t, map[string]string{"tasks.json": controltest.ApprovalPlan})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, done := startRun(ctx, t, repo, m, "run", noSandbox, "tasks.json")
	r := ended(t, done)
	require.Equal(t, "interrupted", readTasks(t, filepath.Join(repo, "tasks.json"))["1"].Status, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)

	st := statgraph(t, repo, "status", "tasks.json")
	require.Equal(t, 0, st.code, "stdout:\n%s\nstderr:\n%s", st.stdout, st.stderr)
	assert.Equal(t, "awaiting-approval", column(t, st.stdout, "1", "PHASE"))
	js := statgraph(t, repo, "status", "--json", "tasks.json")
	require.Equal(t, 0, js.code, js.stderr)
	assert.Contains(t, js.stdout, `"phase":"awaiting-approval"`)
}
