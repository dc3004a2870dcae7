package tests

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
	"github.com/statgraph/statgraph/statgraph/gate"
)

// startRun starts the binary's run (or resume) in repo with the model's
// environment and no terminal, and returns a channel of its end.
func startRun(ctx context.Context, t *testing.T, repo string, m *controltest.SteerModel, args ...string) (*exec.Cmd, <-chan result) {
	t.Helper()
	cmd, stdout, stderr := command(ctx, repo, args...)
	cmd.Env = childEnv(m.Env()...)
	require.NoError(t, cmd.Start())
	done := make(chan result, 1)
	go func() {
		err := cmd.Wait()
		r := result{stdout: stdout.String(), stderr: stderr.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			r.code = ee.ExitCode()
		} else if err != nil {
			r.code = -1
		}
		done <- r
	}()
	return cmd, done
}

// waitQuestion polls control until task id has a question, failing if the
// run ends first.
func waitQuestion(t *testing.T, c *control.Control, id string, ended <-chan result) control.Question {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if q, ok := c.Questions()[id]; ok {
			return q
		}
		select {
		case r := <-ended:
			t.Fatalf("the run ended without asking (exit %d)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatal("no question within 90s")
	return control.Question{}
}

func ended(t *testing.T, done <-chan result) result {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(2 * time.Minute):
		t.Fatal("the run did not end")
		return result{}
	}
}

// Plan approval on the built binary with the scripted model, answered
// through control as statgraph serve and mcp do: the run pauses after the
// planner with the plan as the question; approve runs the executor with
// the model's plan, edit with the edited plan (and never the model's),
// reject ends the task cancelled with the reason and never runs the
// executor.
func TestPlanApproval(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		reply  gate.Reply
		status string
		plan   string // the plan summary the executor's prompt must hold
	}{
		{reply: gate.Reply{Answer: gate.AnswerApprove}, status: "done", plan: controltest.SteerPlan},
		{reply: gate.Reply{Answer: gate.AnswerEdit, Text: `{"summary": "the person's plan: write out.txt twice", "steps": ["write it carefully"]}`},
			status: "done", plan: "the person's plan: write out.txt twice"},
		{reply: gate.Reply{Answer: gate.AnswerReject, Text: "we do not want out.txt"}, status: "cancelled"},
	} {
		t.Run(string(tc.reply.Answer), func(t *testing.T) {
			t.Parallel()
			m := controltest.NewSteerModel(t)
			repo := newRepo(t, map[string]string{"tasks.json": controltest.ApprovalPlan})
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			_, done := startRun(ctx, t, repo, m, "run", noSandbox, "--wait-for-answers", "tasks.json")
			c, err := control.Open(control.Options{File: filepath.Join(repo, "tasks.json"), StoreOnly: true})
			require.NoError(t, err)
			defer c.Close()
			q := waitQuestion(t, c, "1", done)
			assert.Equal(t, gate.KindApproval, q.Kind)
			assert.Equal(t, []string{"approve", "edit", "reject"}, q.Choices)
			assert.Contains(t, q.Proposal, controltest.SteerPlan)
			assert.Empty(t, m.ExecutorPrompts(), "nothing is executed before the plan is approved")

			require.ErrorIs(t, c.Reply("1", gate.Reply{Answer: gate.AnswerEdit, Text: `{"summary": `}), control.ErrBadAnswer, "a plan that does not parse is refused")
			require.ErrorIs(t, c.Reply("1", gate.Reply{Answer: gate.AnswerRetry}), control.ErrBadAnswer, "an answer of the other kind is refused")
			require.NoError(t, c.Reply("1", tc.reply))
			r := ended(t, done)
			task := readTasks(t, filepath.Join(repo, "tasks.json"))["1"]
			assert.Equal(t, tc.status, task.Status, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			assert.Equal(t, 1, m.PlannerCalls())
			prompts := m.ExecutorPrompts()
			if tc.plan == "" {
				assert.Empty(t, prompts, "a rejected plan is never executed")
				assert.Equal(t, "plan rejected by the operator: we do not want out.txt", task.StatusReason)
				return
			}
			require.Len(t, prompts, 1)
			assert.Contains(t, prompts[0], tc.plan)
			if tc.plan != controltest.SteerPlan {
				assert.NotContains(t, prompts[0], controltest.SteerPlan, "the edited plan replaces the model's")
			}
			assert.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		})
	}
}

// Without a terminal and without --wait-for-answers, a plan to approve
// leaves the task interrupted, saying so; a run waiting for the answer
// that is killed (kill -9) loses nothing: resume asks the same question
// again without planning again, and the answer given then runs the task.
func TestPlanApprovalWaitsAndSurvivesKill(t *testing.T) {
	t.Parallel()
	m := controltest.NewSteerModel(t)
	repo := newRepo(t, map[string]string{"tasks.json": controltest.ApprovalPlan})
	file := filepath.Join(repo, "tasks.json")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	_, done := startRun(ctx, t, repo, m, "run", noSandbox, "tasks.json")
	r := ended(t, done)
	task := readTasks(t, file)["1"]
	require.Equal(t, "interrupted", task.Status, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, task.StatusReason, "waiting for its plan to be approved")
	assert.NotEqual(t, 0, r.code)

	cmd, done := startRun(ctx, t, repo, m, "resume", noSandbox, "--wait-for-answers", "tasks.json")
	c, err := control.Open(control.Options{File: file, StoreOnly: true})
	require.NoError(t, err)
	defer c.Close()
	waitQuestion(t, c, "1", done)
	require.NoError(t, syscall.Kill(cmd.Process.Pid, syscall.SIGKILL))
	ended(t, done)
	assert.Empty(t, c.Questions(), "the killed run's question is not shown")

	_, done = startRun(ctx, t, repo, m, "resume", noSandbox, "--wait-for-answers", "tasks.json")
	q := waitQuestion(t, c, "1", done)
	assert.Contains(t, q.Proposal, controltest.SteerPlan)
	require.NoError(t, c.Reply("1", gate.Reply{Answer: gate.AnswerApprove}))
	r = ended(t, done)
	assert.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Equal(t, "done", readTasks(t, file)["1"].Status)
	assert.Equal(t, 1, m.PlannerCalls(), "the plan was made once, before the first pause")
	assert.Len(t, m.ExecutorPrompts(), 1)
}

// reviewTasks is one task the steering model passes at once.
const reviewTasks = `{"tasks": [
  {"id": 1, "title": "write out", "test_cmd": "grep -q attempt out.txt"}
]}
`

// doneTask runs reviewTasks to done with m and returns the repository.
func doneTask(t *testing.T, m *controltest.SteerModel) string {
	t.Helper()
	repo := newRepo(t, map[string]string{"tasks.json": reviewTasks})
	cmd, stdout, stderr := command(context.Background(), repo, "run", noSandbox, "tasks.json")
	cmd.Env = childEnv(m.Env()...)
	r := wait(t, cmd.Run(), stdout, stderr)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Len(t, m.ExecutorPrompts(), 1)
	return repo
}

// checkSentBack runs the plan again and checks that the review's comments
// reached the executor's next prompt as file:line: text, that the new
// attempt started from the task's branch (its commit follows the first
// attempt's) and that the task is done again with both attempts.
func checkSentBack(t *testing.T, repo string, m *controltest.SteerModel, want ...string) {
	t.Helper()
	file := filepath.Join(repo, "tasks.json")
	task := readTasks(t, file)["1"]
	require.Equal(t, "pending", task.Status)
	assert.Contains(t, task.StatusReason, "review comment")
	before := gitOut(t, repo, "rev-parse", planOf(t, repo, "tasks.json", "").Branch("1"))

	cmd, stdout, stderr := command(context.Background(), repo, "run", noSandbox, "tasks.json")
	cmd.Env = childEnv(m.Env()...)
	r := wait(t, cmd.Run(), stdout, stderr)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	prompts := m.ExecutorPrompts()
	require.Len(t, prompts, 2, "one new attempt")
	for _, w := range want {
		assert.Contains(t, prompts[1], w, "the review comment is the new attempt's feedback")
	}
	assert.NotContains(t, prompts[0], want[0])
	task = readTasks(t, file)["1"]
	assert.Equal(t, "done", task.Status)
	assert.Contains(t, strings.Join(task.ErrorHistory, "\n"), "Review after 1 attempts: review: "+want[0])
	branch := planOf(t, repo, "tasks.json", "").Branch("1")
	assert.Equal(t, before, gitOut(t, repo, "rev-parse", branch+"^"), "the new attempt continues the reviewed branch")
	assert.Equal(t, "attempt 2\n", gitOut(t, repo, "show", branch+":out.txt"))
}

// gitOut runs git in dir and returns its output.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	require.NoError(t, err, "git %v", args)
	return string(out)
}

// statgraph review on the built binary: a done task sent back with two
// comments makes one new attempt whose prompt holds them as
// file:line: text; a bad comment, a task that is not done and one that
// does not exist are refused with nothing changed.
func TestReviewCLI(t *testing.T) {
	t.Parallel()
	m := controltest.NewSteerModel(t)
	repo := doneTask(t, m)
	r := statgraph(t, repo, "review", "1", "--comment", "out.txt")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "write it as file:line:text")
	r = statgraph(t, repo, "review", "9", "--comment", "out.txt:1:x")
	assert.NotEqual(t, 0, r.code)
	assert.Contains(t, r.stderr, "9")
	require.Equal(t, "done", readTasks(t, filepath.Join(repo, "tasks.json"))["1"].Status, "nothing changed")

	r = statgraph(t, repo, "review", "1", "--comment", "out.txt:1:say hello instead", "--comment", "out.txt:2-3:add a second line")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "task 1 sent back with 2 comment(s)")
	r = statgraph(t, repo, "review", "1", "--comment", "out.txt:1:again")
	assert.NotEqual(t, 0, r.code, "a task already sent back is not done")
	assert.Contains(t, r.stderr, "only a done task")
	checkSentBack(t, repo, m, "out.txt:1: say hello instead", "out.txt:2-3: add a second line")
}

// The same through statgraph mcp's review_task tool; run_pending then
// makes the new attempt.
func TestReviewMCP(t *testing.T) {
	t.Parallel()
	m := controltest.NewSteerModel(t)
	repo := doneTask(t, m)
	cs, stderr := mcpSessionEnv(t, repo, m.Env(), noSandbox, filepath.Join(repo, "tasks.json"))
	defer cs.Close()
	var got struct {
		ID       string `json:"id"`
		Comments int    `json:"comments"`
	}
	mcpCall(t, cs, "review_task", map[string]any{"id": "1", "comments": []map[string]any{{"file": "out.txt", "line": 1, "text": "use capitals"}}}, &got)
	assert.Equal(t, 1, got.Comments)
	_ = stderr
	checkSentBack(t, repo, m, "out.txt:1: use capitals")
}
