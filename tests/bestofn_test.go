package tests

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/llm/llmtest"
	"github.com/statgraph/statgraph/internal/gittest"
)

// bestOfTasks returns a tasks file of one task whose candidates run the
// shell scripts scripts (one candidate each), with test_cmd test and the
// extra task fields extra (`"judge": ...,` or "").
func bestOfTasks(test, extra string, scripts ...string) string {
	var cands []string
	for _, s := range scripts {
		b, _ := json.Marshal(s)
		cands = append(cands, `{"executor": {"command": ["sh", "-c", `+string(b)+`]}}`)
	}
	tb, _ := json.Marshal(test)
	return `{"tasks": [{"id": 1, "title": "write ok.txt", "max_retries": 1, "test_cmd": ` + string(tb) + `, ` + extra +
		`"candidates": [` + strings.Join(cands, ", ") + `]}]}`
}

// selectionOf reads task id's candidates from statgraph history --json.
func selectionOf(t *testing.T, dir, id string) agents.Selection {
	t.Helper()
	r := statgraph(t, dir, "history", "--json", id)
	require.Equal(t, 0, r.code, r.stderr)
	var h struct {
		Selection *agents.Selection `json:"selection"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &h))
	require.NotNil(t, h.Selection, "history --json has no selection:\n%s", r.stdout)
	return *h.Selection
}

// branchAt returns the commit branch points at in the repository dir.
func branchAt(t *testing.T, dir, branch string) string {
	t.Helper()
	return strings.TrimSpace(gittest.Git(t, dir, "rev-parse", "--verify", "refs/heads/"+branch))
}

// TestBestOfNOnlyOnePasses runs three candidates of which only the second
// makes the test pass: it wins, the task's branch is its commit, and the
// two others stay on their own branches with their results, side by side
// in history. Every candidate gets one advisory warning, so none wins
// outright and all three run to their end.
func TestBestOfNOnlyOnePasses(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"tasks.json": bestOfTasks("test -f ok.txt",
		`"checks": [{"name": "style", "cmd": "false", "mode": "advisory"}], `,
		"echo a > a.txt", "echo ok > ok.txt", "echo c > c.txt")})
	r := statgraph(t, dir, "run")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	task := readTasks(t, dir+"/tasks.json")["1"]
	require.Equal(t, "done", task.Status)
	require.Contains(t, task.StatusReason, "candidate 2 of 3 won (only passing candidate)")

	plan := planOf(t, dir, "tasks.json", "")
	require.Equal(t, branchAt(t, dir, plan.CandidateBranch("1", 2)), branchAt(t, dir, plan.Branch("1")))
	require.Equal(t, "ok", gittest.Git(t, dir, "show", plan.Branch("1")+":ok.txt"))
	for _, k := range []int{1, 3} {
		require.NotEqual(t, branchAt(t, dir, plan.CandidateBranch("1", k)), branchAt(t, dir, plan.Branch("1")))
	}

	sel := selectionOf(t, dir, "1")
	require.Equal(t, 2, sel.Winner)
	require.Equal(t, "only passing candidate", sel.Why)
	require.Len(t, sel.Candidates, 3)
	for _, c := range sel.Candidates {
		require.Equal(t, c.K == 2, c.Passed, "candidate %d", c.K)
		require.Equal(t, plan.CandidateBranch("1", c.K), c.Branch)
		require.Equal(t, 1, c.Warnings, "candidate %d", c.K)
		if c.K != 2 {
			require.Equal(t, "failed", c.Status)
			require.Equal(t, "failed after 1 attempts", c.Reason)
		}
	}
	text := statgraph(t, dir, "history", "--no-diff", "1")
	require.Contains(t, text.stdout, "candidates (winner 2: only passing candidate)")
	require.Contains(t, text.stdout, plan.CandidateBranch("1", 3))
}

// TestBestOfNDocumentedOrder runs three passing candidates: the first with
// the smallest diff but two warnings, the second with one warning and a
// 50-line diff, the third with one warning and a 2-line diff. The fewest
// warnings leave out the first, the smallest diff picks the third.
func TestBestOfNDocumentedOrder(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"tasks.json": bestOfTasks("test -f ok.txt",
		`"checks": [{"name": "w1", "cmd": "test ! -e w1", "mode": "advisory"}, {"name": "w2", "cmd": "test ! -e w2", "mode": "advisory"}], `,
		"touch w1 w2; echo ok > ok.txt", "touch w1; seq 1 50 > ok.txt", "touch w1; printf 'ok\\nok\\n' > ok.txt")})
	r := statgraph(t, dir, "run")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	sel := selectionOf(t, dir, "1")
	require.Equal(t, 3, sel.Winner, "%+v", sel)
	require.Equal(t, "smallest diff", sel.Why)
	got := map[int][2]int{}
	for _, c := range sel.Candidates {
		require.True(t, c.Passed, "candidate %d", c.K)
		got[c.K] = [2]int{c.Warnings, c.DiffLines}
	}
	require.Equal(t, map[int][2]int{1: {2, 1}, 2: {1, 50}, 3: {1, 2}}, got)
	plan := planOf(t, dir, "tasks.json", "")
	require.Equal(t, branchAt(t, dir, plan.CandidateBranch("1", 3)), branchAt(t, dir, plan.Branch("1")))
}

// TestBestOfNStopsTheRest runs a candidate that passes at once with no
// warnings beside one that would sleep for ten minutes: with no judge the
// first wins outright and the second is stopped, so the run ends long
// before the sleep would.
func TestBestOfNStopsTheRest(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"tasks.json": bestOfTasks("test -f ok.txt", "",
		"echo ok > ok.txt", "sleep 600; echo ok > ok.txt")})
	start := time.Now()
	r := statgraph(t, dir, "run")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Less(t, time.Since(start), 5*time.Minute)
	sel := selectionOf(t, dir, "1")
	require.Equal(t, 1, sel.Winner)
	require.Equal(t, "cancelled", sel.Candidates[1].Status, "%+v", sel.Candidates[1])
	require.Contains(t, sel.Candidates[1].Reason, "candidate 1 passed with no warnings")
}

// TestBestOfNJudgeBreaksTie runs three passing candidates equal in
// warnings and diff size, with a judge model (the scripted server) that
// prefers the change writing "two": the tournament (1 against 2, then the
// winner against 3) picks candidate 2, where the smallest-diff rule alone
// would pick 1, and both rounds' reasoning is kept.
func TestBestOfNJudgeBreaksTie(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.SetFallback(func(req openai.ChatCompletionRequest) llmtest.Reply {
		user := req.Messages[len(req.Messages)-1].Content
		_, b, _ := strings.Cut(user, "Change B")
		winner := "A"
		if strings.Contains(b, "+two") {
			winner = "B"
		}
		return llmtest.Text(`{"winner": "`+winner+`", "reasoning": "the change writing two does what the task asks"}`, 10)
	})
	dir := newRepo(t, map[string]string{"tasks.json": bestOfTasks("test -f ok.txt", `"judge": "judge-model", `,
		"echo one > ok.txt", "echo two > ok.txt", "echo six > ok.txt")})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, stdout, stderr := command(ctx, dir, "run")
	cmd.Env = childEnv("OPENAI_BASE_URL="+srv.BaseURL(), "OPENAI_API_KEY=test-key")
	r := wait(t, cmd.Run(), stdout, stderr)
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	sel := selectionOf(t, dir, "1")
	require.Equal(t, 2, sel.Winner, "%+v", sel)
	require.Equal(t, "judge", sel.Why)
	require.Equal(t, []agents.JudgeRound{
		{A: 1, B: 2, Winner: 2, Reasoning: "the change writing two does what the task asks"},
		{A: 2, B: 3, Winner: 2, Reasoning: "the change writing two does what the task asks"},
	}, sel.Judge)
	for _, req := range srv.Requests() {
		require.Equal(t, "judge-model", req.Model)
	}
	require.Len(t, srv.Requests(), 2)
}

// TestBestOfNPick makes the losing candidate of two passing ones the
// winner with statgraph pick: the task's branch moves to its commit, the
// old winner keeps its own branch, history says who chose, and a
// candidate that failed cannot be picked.
func TestBestOfNPick(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"tasks.json": bestOfTasks("test -f ok.txt",
		`"checks": [{"name": "style", "cmd": "false", "mode": "advisory"}], `,
		"echo ok > ok.txt", "seq 1 9 > ok.txt", "echo no > no.txt")})
	r := statgraph(t, dir, "run")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	plan := planOf(t, dir, "tasks.json", "")
	require.Equal(t, 1, selectionOf(t, dir, "1").Winner)
	first := branchAt(t, dir, plan.Branch("1"))

	r = statgraph(t, dir, "pick", "1", "3")
	require.Equal(t, 2, r.code, "picking a failed candidate: %s", r.stderr)
	require.Contains(t, r.stderr, "candidate 3 did not pass its blocking checks")
	require.Equal(t, first, branchAt(t, dir, plan.Branch("1")))

	r = statgraph(t, dir, "pick", "1", "2")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Equal(t, branchAt(t, dir, plan.CandidateBranch("1", 2)), branchAt(t, dir, plan.Branch("1")))
	require.Equal(t, first, branchAt(t, dir, plan.CandidateBranch("1", 1)))
	sel := selectionOf(t, dir, "1")
	require.Equal(t, 2, sel.Winner)
	require.Contains(t, sel.Why, "picked by a person (was candidate 1")
	require.Contains(t, readTasks(t, dir+"/tasks.json")["1"].StatusReason, "candidate 2 of 3 picked by a person")
	h := statgraph(t, dir, "history", "1")
	require.Contains(t, h.stdout, "+9", "history shows the picked candidate's diff")
}

// TestBestOfNResumeAfterCandidatesEnded resumes a best-of-N task that a
// crash left in progress after its candidates ended and published (their
// workspaces removed): no candidate runs again, their branches stay where
// they were, and the choice is made and recorded as before.
func TestBestOfNResumeAfterCandidatesEnded(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"tasks.json": bestOfTasks("test -f ok.txt",
		`"checks": [{"name": "style", "cmd": "false", "mode": "advisory"}], `,
		"echo a > a.txt", "echo ok > ok.txt")})
	r := statgraph(t, dir, "run")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	plan := planOf(t, dir, "tasks.json", "")
	tips := map[int]string{1: branchAt(t, dir, plan.CandidateBranch("1", 1)), 2: branchAt(t, dir, plan.CandidateBranch("1", 2))}

	data, err := os.ReadFile(dir + "/tasks.json")
	require.NoError(t, err)
	require.Contains(t, string(data), `"status": "done"`)
	require.NoError(t, os.WriteFile(dir+"/tasks.json", []byte(strings.Replace(string(data), `"status": "done"`, `"status": "in-progress"`, 1)), 0o644))
	r = statgraph(t, dir, "resume")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.Equal(t, "done", readTasks(t, dir+"/tasks.json")["1"].Status)
	for k, tip := range tips {
		require.Equal(t, tip, branchAt(t, dir, plan.CandidateBranch("1", k)), "candidate %d ran again", k)
	}
	sel := selectionOf(t, dir, "1")
	require.Equal(t, 2, sel.Winner)
	require.Equal(t, tips[2], branchAt(t, dir, plan.Branch("1")))
}
