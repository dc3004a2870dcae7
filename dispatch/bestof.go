package dispatch

// bestof.go runs a best-of-N unit (tasks.json "attempts" or "candidates"):
// a candidate is what runs (runUnit, as any unit, in its own workspace,
// thread and branch), the unit is what chooses (choose.go). The unit's
// branch becomes the winner's; its thread records the choice.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/tasks"
	"github.com/statgraph/statgraph/verifier"
)

// slot is one run of the orchestrator graph for a unit: the unit's own
// (k == 0), or candidate k (1-based) of a best-of-N unit, which has its own
// workspace (under Plan.CandidateRoot), thread, branch, prompt files and
// agent home, and spends from budget, the unit's.
type slot struct {
	id     string
	k      int
	budget *llm.Budget // the unit's budget, shared by its candidates; nil for k == 0
	onto   string      // the target of a landing's run (land.go); "" for a unit's or a candidate's
}

// name names the slot's prompt and home directories: the unit's id, or
// "<id>@<k>" for a candidate.
func (s slot) name() string {
	if s.k == 0 {
		return s.id
	}
	return s.id + "@" + strconv.Itoa(s.k)
}

// thread returns the slot's checkpoint thread.
func (s slot) thread(plan Plan) string {
	if s.k == 0 {
		return plan.Thread(s.id)
	}
	return plan.CandidateThread(s.id, s.k)
}

// errBeaten is the cause of a candidate's context when another candidate
// has won and it cannot beat it.
var errBeaten = errors.New("dispatch: another candidate won")

// beaten reports whether ctx was cancelled because another candidate won.
func beaten(ctx context.Context) bool { return errors.Is(context.Cause(ctx), errBeaten) }

// beatenOutcome is the outcome of a candidate stopped because another won.
func beatenOutcome(ctx context.Context, s agents.TaskState) tasks.Outcome {
	return tasks.Outcome{Status: tasks.StatusCancelled, Reason: context.Cause(ctx).Error(), RetryCount: s.RetryCount, ErrorHistory: s.ErrorHistory}
}

// endedThread returns the last state of candidate s's thread when its run
// ended (done or failed) before: a run killed after a candidate ended
// continues without running it again. ok is false for a unit's own slot,
// a new thread, or one that has nodes left to run.
func endedThread(ctx context.Context, g *statgraph.Graph[agents.TaskState], s slot, plan Plan) (agents.TaskState, bool) {
	if s.k == 0 {
		return agents.TaskState{}, false
	}
	snap, err := g.State(ctx, s.thread(plan))
	if err != nil || len(snap.Next) > 0 || len(snap.Interrupts) > 0 {
		return agents.TaskState{}, false
	}
	switch snap.State.Phase {
	case agents.PhaseDone, agents.PhaseFailed:
		return snap.State, true
	}
	return agents.TaskState{}, false
}

// endedCandidate returns what candidate k of unit id ended with when its
// thread ended and its branch holds its last attempt: a run killed after
// the candidate ended (and its workspace was removed) but before the
// choice was recorded continues without preparing it again.
func (d *Dispatcher) endedCandidate(ctx context.Context, plan Plan, id string, k int) (ran, bool) {
	g, err := recorderGraph(d.Checkpointer)
	if err != nil {
		return ran{}, false
	}
	s := slot{id: id, k: k}
	state, ok := endedThread(ctx, g, s, plan)
	if !ok || len(state.Attempts) == 0 {
		return ran{}, false
	}
	branch := plan.CandidateBranch(id, k)
	pub, err := workspace.OpenPublished(plan.Repo, branch)
	if err != nil || pub.Tip() != state.Attempts[len(state.Attempts)-1].Commit {
		return ran{}, false
	}
	o := tasks.Outcome{Status: tasks.StatusDone, Reason: warningsNote(state.Verification.Warnings), RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory}
	if state.Phase == agents.PhaseFailed {
		o = tasks.Outcome{Status: tasks.StatusFailed, Reason: fmt.Sprintf("failed after %d attempts", state.RetryCount),
			RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory, FailedAt: state.FailedAt}
	}
	return ran{k: k, rec: o, state: state, res: UnitResult{ID: id, Status: o.Status, Reason: o.Reason, Branch: branch, Tokens: state.Tokens, Attempts: state.RetryCount}}, true
}

// ran is what one candidate ended with.
type ran struct {
	k     int
	res   UnitResult
	rec   tasks.Outcome
	state agents.TaskState
}

// runBest runs the candidates of best-of-N unit id side by side, each
// through runUnit from the same base, chooses the winner among those whose
// blocking checks passed (choose), moves the unit's branch to the winner's
// commit and records the choice in the unit's thread. A candidate still
// running is stopped as soon as the finished ones hold a winner it cannot
// beat (decided). The unit's outcome is the winner's (done); failed when
// no candidate passed; interrupted when one was stopped or could not run
// and none had won, so that resume continues the unfinished candidates.
func (d *Dispatcher) runBest(ctx context.Context, plan Plan, id string, deps []string, changed chan<- struct{}, rec *tasks.Outcome) UnitResult {
	t, _ := d.File.Task(id)
	n := d.candidates(t)
	start := time.Now()
	budget := d.candidatesBudget(ctx, plan, t, n)
	cctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	out := make(chan ran, n)
	var wg sync.WaitGroup
	for k := 1; k <= n; k++ {
		if r, ok := d.endedCandidate(ctx, plan, id, k); ok {
			out <- r
			continue
		}
		wg.Go(func() {
			var r tasks.Outcome
			res, state := d.runUnit(cctx, plan, slot{id: id, k: k, budget: budget}, deps, changed, &r)
			out <- ran{k: k, res: res, rec: r, state: state}
		})
	}
	go func() { wg.Wait(); close(out) }()
	cands := make([]*candidate, 0, n)
	decided := false
	for r := range out {
		c := d.candidateOf(ctx, plan, t, r)
		cands = append(cands, c)
		if !decided && outright(t, cands, n) {
			decided = true
			stop(fmt.Errorf("%w: candidate %d passed with no warnings", errBeaten, c.K))
		}
	}
	sortCandidates(cands)
	sel := &agents.Selection{}
	for _, c := range cands {
		sel.Candidates = append(sel.Candidates, c.Candidate)
	}
	res := UnitResult{ID: id, Title: t.Title, Elapsed: time.Since(start), Tokens: budget.Spent(), Usage: budget.Total()}
	finish := func(o tasks.Outcome, state agents.TaskState) UnitResult {
		*rec = o
		res.Status, res.Reason, res.Attempts = o.Status, o.Reason, o.RetryCount
		state.Selection = sel
		state.Tokens, state.Usage = res.Tokens, res.Usage // the task's spend: every candidate's
		if err := d.recordSelection(context.WithoutCancel(ctx), plan, id, state); err != nil && o.Status == tasks.StatusDone {
			*rec = tasks.Outcome{Status: tasks.StatusInterrupted, Reason: "its candidates ended but the choice could not be recorded: " + oneLine(err.Error()) + "; run statgraph resume",
				RetryCount: o.RetryCount, ErrorHistory: o.ErrorHistory}
			res.Status, res.Reason = rec.Status, rec.Reason
		}
		return res
	}
	if !decided {
		for _, c := range cands {
			if c.Status == tasks.StatusInterrupted {
				return finish(tasks.Outcome{Status: tasks.StatusInterrupted, Reason: fmt.Sprintf("candidate %d: %s", c.K, c.Reason),
					RetryCount: t.RetryCount, ErrorHistory: t.ErrorHistory}, cands[0].state)
			}
		}
	}
	judge, err := d.judge(t, budget)
	if err != nil {
		judge = nil
		sel.Judge = append(sel.Judge, agents.JudgeRound{Reasoning: "no judge: " + err.Error()})
	}
	w, why, rounds := choose(ctx, t, cands, judge)
	sel.Judge = append(sel.Judge, rounds...)
	if w == nil {
		var hist []string
		for _, c := range cands {
			for _, e := range c.rec.ErrorHistory {
				hist = append(hist, fmt.Sprintf("candidate %d: %s", c.K, e))
			}
		}
		now := time.Now().UTC()
		return finish(tasks.Outcome{Status: tasks.StatusFailed, Reason: fmt.Sprintf("none of the %d candidates passed its blocking checks", n),
			RetryCount: maxAttempts(cands), ErrorHistory: hist, FailedAt: &now}, cands[0].state)
	}
	sel.Winner, sel.Why = w.K, why
	for i := range sel.Candidates {
		sel.Candidates[i].Branch = plan.CandidateBranch(id, sel.Candidates[i].K)
	}
	if err := d.makeWinner(context.WithoutCancel(ctx), plan, id, w); err != nil {
		return finish(tasks.Outcome{Status: tasks.StatusInterrupted, Reason: fmt.Sprintf("candidate %d won but the task's branch could not be moved to it: %s; fix that and run statgraph resume", w.K, oneLine(err.Error())),
			RetryCount: w.rec.RetryCount, ErrorHistory: w.rec.ErrorHistory}, w.state)
	}
	res.Branch = plan.Branch(id)
	if !d.KeepWorkspaces {
		if err := keepLayer(plan, id); err != nil {
			d.logf("task %s: %v\n", id, err)
		}
		if _, err := removeUnitState(plan, id); err != nil {
			d.logf("task %s: %v\n", id, err)
		}
	}
	reason := fmt.Sprintf("candidate %d of %d won (%s)", w.K, n, why)
	if note := warningsNote(w.state.Verification.Warnings); note != "" {
		reason += "; " + note
	}
	return finish(tasks.Outcome{Status: tasks.StatusDone, Reason: reason, RetryCount: w.rec.RetryCount, ErrorHistory: w.rec.ErrorHistory}, w.state)
}

// candidatesBudget returns the budget the n candidates of task t spend
// from: the task's limits (budget_tokens, budget_usd) under the run's,
// charged with what each candidate's thread recorded before this process
// started, so that a resumed task counts (and its limits cover) the
// candidates that ended or ran before a crash or a stop. A candidate that
// runs again restores its own earlier spend into its own budget only
// (Budget.Restore charges no ancestor), so nothing is counted twice.
func (d *Dispatcher) candidatesBudget(ctx context.Context, plan Plan, t tasks.Task, n int) *llm.Budget {
	var limit llm.Limit
	if t.BudgetTokens != nil {
		limit.Tokens = *t.BudgetTokens
	}
	if t.BudgetUSD != nil {
		limit.USD = *t.BudgetUSD
	}
	budget := llm.NewBudgetOf(limit, d.Budget, nil)
	g, err := recorderGraph(d.Checkpointer)
	if err != nil {
		return budget
	}
	for k := 1; k <= n; k++ {
		if _, err := restoreTokens(ctx, g, plan.CandidateThread(t.ID, k), budget); err != nil {
			d.logf("task %s: candidate %d: %v\n", t.ID, k, err)
		}
	}
	return budget
}

// candidate is one finished candidate as the choice sees it.
type candidate struct {
	agents.Candidate
	rec   tasks.Outcome
	state agents.TaskState
	diff  string // its change against the unit's base, for the judge
}

// candidateOf reads what candidate r ended with: its branch's tip and its
// diff against the base (from the published branch, since its workspace
// may be gone).
func (d *Dispatcher) candidateOf(ctx context.Context, plan Plan, t tasks.Task, r ran) *candidate {
	ct := t.Candidate(r.k)
	c := &candidate{rec: r.rec, state: r.state, Candidate: agents.Candidate{
		K: r.k, Thread: plan.CandidateThread(t.ID, r.k), Executor: ct.Executor.String(), Model: ct.Model,
		Status: r.rec.Status, Reason: r.rec.Reason, Passed: r.rec.Status == tasks.StatusDone,
		Warnings: len(r.state.Verification.Warnings), Attempts: r.rec.RetryCount, Tokens: r.res.Tokens,
	}}
	if ct.Executor.IsLLM() && ct.Model == "" {
		c.Model = d.Model.Model
	}
	if r.res.Branch == "" {
		return c
	}
	c.Branch = r.res.Branch
	pub, err := workspace.OpenPublished(plan.Repo, r.res.Branch)
	if err != nil {
		return c
	}
	c.Commit = pub.Tip()
	if len(r.state.Attempts) > 0 && r.state.Attempts[0].Commit != "" {
		if diff, err := pub.Diff(context.WithoutCancel(ctx), r.state.Attempts[0].Commit); err == nil {
			c.diff, c.DiffLines = diff, diffLines(diff)
		}
	}
	return c
}

// makeWinner moves the unit's branch to winner w's commit, whatever it
// held (a run before a reset, or nothing).
func (d *Dispatcher) makeWinner(ctx context.Context, plan Plan, id string, w *candidate) error {
	old := ""
	if pub, err := workspace.OpenPublished(plan.Repo, plan.Branch(id)); err == nil {
		old = pub.Tip()
	}
	if old == w.Commit {
		return nil
	}
	return workspace.MoveBranch(ctx, plan.Repo, plan.Branch(id), old, w.Commit)
}

// recordSelection writes state (the winner's, with the Selection) as the
// last checkpoint of the unit's own thread, so that history, status, the
// web UI and MCP read the unit where they read any unit. A thread that
// has no checkpoint yet gets one first: the graph's input, stopped before
// the planner.
func (d *Dispatcher) recordSelection(ctx context.Context, plan Plan, id string, state agents.TaskState) error {
	g, err := recorderGraph(d.Checkpointer)
	if err != nil {
		return err
	}
	thread := plan.Thread(id)
	if _, err := g.State(ctx, thread); errors.Is(err, statgraph.ErrNoCheckpoint) {
		if _, err := g.Invoke(ctx, state, statgraph.WithThread(thread)); err != nil && !errors.Is(err, statgraph.ErrInterrupted) {
			return fmt.Errorf("record the choice of task %s: %w", id, err)
		}
	} else if err != nil {
		return fmt.Errorf("record the choice of task %s: %w", id, err)
	}
	if _, err := g.UpdateState(ctx, thread, state, statgraph.End); err != nil {
		return fmt.Errorf("record the choice of task %s: %w", id, err)
	}
	return nil
}

// RecordSelection is recordSelection for statgraph pick (package
// control): it writes state, with its Selection, as the last checkpoint
// of unit id's thread in cp.
func RecordSelection(ctx context.Context, cp statgraph.Checkpointer, plan Plan, id string, state agents.TaskState) error {
	return (&Dispatcher{Checkpointer: cp}).recordSelection(ctx, plan, id, state)
}

// recorderGraph is the orchestrator graph with agents that do nothing,
// stopped before the planner: it only writes and reads checkpoints.
func recorderGraph(cp statgraph.Checkpointer) (*statgraph.Graph[agents.TaskState], error) {
	nop := agents.ExecutorFunc(func(context.Context, agents.TaskState) (string, error) { return "", nil })
	ver := agents.VerifierFunc(func(context.Context, agents.TaskState) (verifier.Verification, error) {
		return verifier.Verification{}, nil
	})
	return agents.NewGraph(agents.Config{Executor: nop, Verifier: ver}, statgraph.WithCheckpointer(cp), statgraph.WithInterruptBefore(agents.NodePlanner))
}

// diffLines counts the lines a unified diff adds and removes.
func diffLines(diff string) int {
	n := 0
	for line := range strings.Lines(diff) {
		if (strings.HasPrefix(line, "+") && !strings.HasPrefix(line, "+++")) || (strings.HasPrefix(line, "-") && !strings.HasPrefix(line, "---")) {
			n++
		}
	}
	return n
}

func maxAttempts(cs []*candidate) int {
	n := 0
	for _, c := range cs {
		n = max(n, c.Attempts)
	}
	return n
}
