package dispatch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/tasks"
)

// takeUp handles unit id when an earlier run left it in progress (killed)
// or interrupted although its thread ended (done, skipped or failed): the
// run was killed, or its publish failed, after the graph ended and before
// the outcome was recorded. Running it again would redo the work on a new
// commit that the branch already published cannot fast-forward to. So:
//   - when the unit's branch in the repository holds the thread's last
//     attempt (that commit, or a commit with its tree), the unit is taken
//     up with the thread's outcome, nothing run again;
//   - when the branch is missing and the workspace is there, the
//     workspace is published (republish) and the unit taken up;
//   - when the branch is behind the workspace's work (an ancestor of it:
//     a branch the user made at the base, or a publish that failed), the
//     workspace is published and the unit taken up;
//   - when the branch holds something else, the unit ends interrupted with
//     a reason naming the branch, its commit and what to do, and the
//     branch is left alone.
//
// ok is false when none of this applies: the unit runs as usual. A
// best-of-N unit (runBest takes up its own candidates) and units run by a
// Runner (their worker takes them up, see TakeUp) are never taken up here.
func (d *Dispatcher) takeUp(ctx context.Context, plan Plan, id, status string) (res UnitResult, o tasks.Outcome, ok bool) {
	if d.Runner != nil || (status != tasks.StatusInProgress && status != tasks.StatusInterrupted) {
		return res, o, false
	}
	res, o, ok, _ = d.takeUpWith(ctx, plan, id, nil)
	return res, o, ok
}

// TakeUp is the take-up of a unit that a queue worker runs with RunOne
// (see takeUp, whose decision it is): called before the unit runs, it
// takes up a run an earlier attempt (on this machine or another) ended
// and published, but was killed before recording. prepare is called once
// the unit's thread is known to have ended, with the unit's branch and
// the commit of the run's last attempt, before the branch is read in
// Repo: a worker brings the branch there from the shared remote, and
// reports false when the run is not one an earlier attempt was cut off
// after (nothing is taken up then). An error from prepare is returned,
// nothing taken up; ok false means the unit runs as usual.
func (d *Dispatcher) TakeUp(ctx context.Context, id string, prepare func(branch, commit string) (bool, error)) (res UnitResult, o tasks.Outcome, ok bool, err error) {
	plan, err := d.plan()
	if err != nil {
		return res, o, false, err
	}
	return d.takeUpWith(ctx, plan, id, prepare)
}

// takeUpWith is takeUp's decision for unit id, whatever its status;
// prepare (nil for none) is TakeUp's.
func (d *Dispatcher) takeUpWith(ctx context.Context, plan Plan, id string, prepare func(branch, commit string) (bool, error)) (res UnitResult, o tasks.Outcome, ok bool, err error) {
	t, _ := d.File.Task(id)
	if d.candidates(t) > 1 {
		return res, o, false, nil
	}
	g, err := recorderGraph(d.Checkpointer)
	if err != nil {
		return res, o, false, nil
	}
	snap, err := g.State(ctx, plan.Thread(id))
	if err != nil || len(snap.Next) > 0 || len(snap.Interrupts) > 0 || len(snap.State.Attempts) == 0 {
		return res, o, false, nil
	}
	state := snap.State
	switch state.Phase {
	case agents.PhaseDone:
		o = tasks.Outcome{Status: tasks.StatusDone, Reason: warningsNote(state.Verification.Warnings), RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory}
	case agents.PhaseSkipped:
		o = tasks.Outcome{Status: tasks.StatusDone, Reason: "skipped by operator with checks failing", RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory}
	case agents.PhaseFailed:
		o = tasks.Outcome{Status: tasks.StatusFailed, Reason: fmt.Sprintf("failed after %d attempts", state.RetryCount),
			RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory, FailedAt: state.FailedAt}
	default:
		return res, o, false, nil
	}
	last := state.Attempts[len(state.Attempts)-1]
	branch := plan.Branch(id)
	if prepare != nil {
		if ok, err := prepare(branch, last.Commit); !ok || err != nil {
			return res, o, false, err
		}
	}
	_, statErr := os.Stat(filepath.Join(plan.WorkDir(), id, ".git"))
	hasWorkspace := statErr == nil
	pub, err := workspace.OpenPublished(plan.Repo, branch)
	switch {
	case err != nil && !hasWorkspace:
		return res, o, false, nil // nothing published and nothing to publish: it runs again
	case err != nil:
		if d.republish(ctx, plan, id) == "" {
			return res, o, false, nil
		}
	case pub.Tip() != last.Commit && (last.Tree == "" || pub.Tree() != last.Tree) &&
		// A branch behind the work (made by the user at the base, or
		// left by a publish that failed) moves forward to it.
		!(hasWorkspace && d.republish(ctx, plan, id) != ""):
		o = tasks.Outcome{Status: tasks.StatusInterrupted,
			Reason: fmt.Sprintf("its last run ended %s at commit %s but was stopped before recording it, and its branch %s in %s is now at %s, which holds other work; "+
				"rename or delete that branch and run statgraph resume (the task then runs again)", state.Phase, last.Commit, branch, plan.Repo, pub.Tip()),
			RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory}
		return UnitResult{ID: id, Title: t.Title, Status: o.Status, Reason: o.Reason, Attempts: o.RetryCount, Tokens: state.Tokens, Usage: state.Usage}, o, true, nil
	}
	if hasWorkspace && !d.KeepWorkspaces {
		_, err := workspace.RemoveDir(plan.WorkDir(), id)
		if err == nil && o.Status == tasks.StatusDone {
			err = keepLayer(plan, id)
		}
		if err == nil {
			_, err = removeUnitState(plan, id)
		}
		if err != nil {
			d.logf("task %s: %v\n", id, err)
		}
	}
	d.logf("task %s: its last run ended %s and published its branch %s but was stopped before recording it; took up its branch without running it again\n", id, state.Phase, branch)
	return UnitResult{ID: id, Title: t.Title, Status: o.Status, Reason: o.Reason, Branch: branch, Attempts: o.RetryCount, Tokens: state.Tokens, Usage: state.Usage}, o, true, nil
}
