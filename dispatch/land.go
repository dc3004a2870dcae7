package dispatch

// This file is the merge queue: Land takes done units one at a time,
// merges each one's branch onto the current tip of a target branch in a
// fresh workspace, checks the merge there, and moves the target only to a
// merge that passed. It is stacking (stack.go) pointed the other way: a
// unit started from the merge of its dependencies' branches; a landing
// starts from the merge of the target's tip and the unit's branch, with
// the same workspace, the same conflict check and the same
// executor -> verifier loop when that merge conflicts or fails.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/internal/proc"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/tasks"
	"github.com/statgraph/statgraph/verifier"
)

// Landing is the outcome of Land.
type Landing struct {
	// Onto is the target branch; Tip its commit when Land ended.
	Onto, Tip string
	// Units has one entry per done unit, in the order Land took them.
	Units []LandedUnit
}

// LandedUnit says where one done unit stands in the queue.
type LandedUnit struct {
	ID, Branch string
	LandRecord
	// Now is true when the unit landed in this call.
	Now bool
}

// Failed reports whether a done unit is not landed.
func (l Landing) Failed() bool {
	for _, u := range l.Units {
		if u.State != LandLanded {
			return true
		}
	}
	return false
}

// ErrOntoCheckedOut is returned by Land when the target branch is checked
// out in the repository or one of its worktrees: moving it would leave
// that working tree behind its branch, and Land never touches a working
// tree (as git push refuses to update a checked-out branch).
var ErrOntoCheckedOut = errors.New("dispatch: the branch to land onto is checked out")

// Land lands the done units onto the branch onto of the repository, one
// at a time, each after the units it depends on and otherwise in the order
// they finished: it merges the unit's published branch onto onto's current
// tip in a workspace of its own (under Plan.LandDir), runs the unit's
// checks there in the sandbox, and moves onto to that merge only when they
// pass. A merge that conflicts, or whose checks fail, goes to the unit's
// agent as a new attempt (its own thread, Plan.LandThread) with the
// conflict or the failures as its feedback, through the executor ->
// verifier loop and its max_retries, starting from the merge; the target
// moves when an attempt passes. A unit that does not land stays done; its
// record says why (LandConflict, LandChecks, LandBlocked), and a later
// Land tries it again once the target or its branch has moved. A unit
// whose dependency is not landed waits. Every record is durable in
// Plan.LandFile before Land goes on; whether a unit landed is read from
// git (its branch's tip is in the target's history), so a record a kill
// lost is found again.
//
// The target moves only by a fast-forward under git's lock-file protocol,
// compared and swapped with the tip the merge was made on
// (workspace.Workspace.Finish): a process killed at any moment leaves it
// at a tip whose checks passed, and Land called again finishes, continuing
// an agent's attempts from their checkpoint. A target that moved meanwhile
// (the user committed on it) is merged again from its new tip. Land fails
// with ErrOntoCheckedOut when onto is checked out, before doing anything.
// The caller holds the file's lock.
func (d *Dispatcher) Land(ctx context.Context, onto string) (Landing, error) {
	out := Landing{Onto: onto}
	if d.Checkpointer == nil {
		return out, errors.New("dispatch: Land needs the Checkpointer (the run store)")
	}
	plan, err := d.plan()
	if err != nil {
		return out, err
	}
	if err := CheckLandTarget(ctx, plan.Repo, onto); err != nil {
		return out, err
	}
	if err := d.checkSandbox(); err != nil {
		return out, err
	}
	if err := plan.Ensure(); err != nil {
		return out, err
	}
	order, err := d.landOrder(ctx, plan)
	if err != nil {
		return out, err
	}
	recs, err := ReadLanding(plan, onto)
	if err != nil {
		return out, err
	}
	deps := map[string][]string{}
	for _, u := range d.File.Units() {
		deps[u.ID] = u.Deps
	}
	state := map[string]string{}
	for _, id := range order {
		u := LandedUnit{ID: id, Branch: plan.Branch(id)}
		u.LandRecord, u.Now, err = d.landUnit(ctx, plan, onto, id, deps[id], state, recs[id])
		if err != nil {
			return out, err
		}
		state[id] = u.State
		was := recs[id]
		was.At = u.At
		if u.LandRecord != was {
			if err := recordLanding(plan, onto, id, u.LandRecord); err != nil {
				return out, err
			}
		}
		out.Units = append(out.Units, u)
	}
	out.Tip, err = revParse(ctx, plan.Repo, "refs/heads/"+onto)
	return out, err
}

// CheckLandTarget returns an error when onto is not a branch of repo, or
// one wrapping ErrOntoCheckedOut when repo or one of its worktrees has it
// checked out, saying what to do.
func CheckLandTarget(ctx context.Context, repo, onto string) error {
	if onto == "" || strings.HasPrefix(onto, "-") {
		return fmt.Errorf("land onto %q: give the name of a branch, e.g. --onto main", onto)
	}
	tip, err := revParse(ctx, repo, "refs/heads/"+onto)
	if err != nil {
		return err
	}
	if tip == "" {
		return fmt.Errorf("land onto %s: %s has no branch %s; create it (git branch %s) or name another with --onto", onto, repo, onto, onto)
	}
	list, err := proc.RunGit(ctx, proc.Git{Dir: repo}, "worktree", "list", "--porcelain")
	if err != nil {
		return fmt.Errorf("land onto %s: list the worktrees of %s: %w", onto, repo, err)
	}
	where := ""
	for line := range strings.Lines(string(list)) {
		line = strings.TrimSpace(line)
		if p, ok := strings.CutPrefix(line, "worktree "); ok {
			where = p
		}
		if line == "branch refs/heads/"+onto {
			return fmt.Errorf("%w: %s has %s checked out, and land never changes a working tree; "+
				"run `git switch --detach` there (your files stay as they are), land, then `git switch %s`; "+
				"or land onto another branch (--onto landing) and `git merge --ff-only landing` yourself",
				ErrOntoCheckedOut, where, onto, onto)
		}
	}
	return nil
}

// landOrder returns the done units in the order Land takes them: each
// after the units it depends on; among those free to go, the one that
// finished first (its thread's last checkpoint), then file order.
func (d *Dispatcher) landOrder(ctx context.Context, plan Plan) ([]string, error) {
	ids := doneInOrder(d.File)
	finished := make(map[string]time.Time, len(ids))
	for _, id := range ids {
		cps, err := d.Checkpointer.Range(ctx, plan.Thread(id), 0, 0, 1)
		if err != nil {
			return nil, fmt.Errorf("read when task %s finished from the run store: %w", id, err)
		}
		if len(cps) > 0 {
			finished[id] = cps[0].Created
		}
	}
	deps := map[string][]string{}
	for _, u := range d.File.Units() {
		deps[u.ID] = u.Deps
	}
	placed := map[string]bool{}
	var out []string
	for len(out) < len(ids) {
		next := ""
		for _, id := range ids {
			if placed[id] || !allPlaced(deps[id], placed, ids) {
				continue
			}
			if next == "" || finished[id].Before(finished[next]) {
				next = id
			}
		}
		placed[next] = true
		out = append(out, next)
	}
	return out, nil
}

// allPlaced reports whether every dependency among ids is placed.
func allPlaced(deps []string, placed map[string]bool, ids []string) bool {
	for _, dep := range deps {
		if !placed[dep] && slices.Contains(ids, dep) {
			return false
		}
	}
	return true
}

// maxLandMoves is how many times landUnit merges a unit again because the
// target moved between its merge and the swap, before it leaves the unit
// waiting for the next land.
const maxLandMoves = 4

// landUnit lands unit id, or says why not. It returns an error only when
// Land must stop (ctx done). prior is the unit's record so far.
func (d *Dispatcher) landUnit(ctx context.Context, plan Plan, onto, id string, deps []string, state map[string]string, prior LandRecord) (LandRecord, bool, error) {
	branch := plan.Branch(id)
	tip, err := revParse(ctx, plan.Repo, "refs/heads/"+branch)
	if err != nil {
		return prior, false, err
	}
	if tip == "" {
		return LandRecord{State: LandBlocked, Reason: fmt.Sprintf("no published branch %s (done before statgraph ran it, or deleted): nothing to land", branch)}, false, nil
	}
	for try := 0; ; try++ {
		target, err := revParse(ctx, plan.Repo, "refs/heads/"+onto)
		if err != nil {
			return prior, false, err
		}
		in, err := isAncestorIn(ctx, plan.Repo, tip, target)
		if err != nil {
			return prior, false, err
		}
		if in {
			rec := LandRecord{State: LandLanded, Commit: prior.Commit}
			if prior.State != LandLanded {
				rec.Commit = target // landed by a Land a kill stopped before it recorded it, or merged by hand
			}
			return rec, false, nil
		}
		for _, dep := range deps {
			if s, ok := state[dep]; ok && s != LandLanded {
				return LandRecord{State: LandWaiting, Reason: fmt.Sprintf("waits for task %s, which is not landed (%s)", dep, s)}, false, nil
			}
		}
		if (prior.State == LandConflict || prior.State == LandChecks) && prior.OntoTip == target && prior.BranchTip == tip {
			return prior, false, nil // nothing moved since it failed: the same merge would fail again
		}
		rec, moved, err := d.landAttempt(ctx, plan, onto, id, branch, tip, target)
		if err != nil || !moved {
			return rec, rec.State == LandLanded, err
		}
		if try >= maxLandMoves-1 {
			return LandRecord{State: LandWaiting, Reason: fmt.Sprintf("%s moved %d times while its merge was checked (someone is committing on it); run statgraph land again once it is quiet", onto, maxLandMoves)}, false, nil
		}
		// The target moved between the merge and the swap: merge again
		// from its new tip.
	}
}

// landAttempt merges branch (at tip) onto target (onto's tip), checks the
// merge, hands a conflict or a failure to the unit's agent, and moves onto
// when the result passes. moved reports that onto moved meanwhile, so
// nothing was landed and the caller merges again.
func (d *Dispatcher) landAttempt(ctx context.Context, plan Plan, onto, id, branch, tip, target string) (rec LandRecord, moved bool, err error) {
	t, _ := d.File.Task(id)
	failed := func(state, reason string) (LandRecord, bool, error) {
		return LandRecord{State: state, Reason: reason, OntoTip: target, BranchTip: tip}, false, nil
	}
	root, thread := plan.LandDir(), plan.LandThread(id)
	opts := workspace.Options{Source: plan.Repo, TaskID: id, Plan: plan.Key, Root: root, Branch: onto, Base: onto, Merge: []string{branch},
		CopyFiles: t.CopyFiles, Setup: setupFunc(t, d.sandbox(t, filepath.Join(root, id), plan)),
		MaxFileBytes: int64(t.Limits.FileBytes), MaxCommitFiles: t.Limits.WriteFiles, MaxCommitBytes: int64(t.Limits.WriteBytes)}
	d.logf("land: task %s: merging %s onto %s (%s) and checking it\n", id, branch, onto, target[:min(12, len(target))])
	ws, err := d.landWorkspace(ctx, opts, thread)
	if err != nil {
		if ctx.Err() != nil {
			return LandRecord{}, false, err
		}
		return failed(LandBlocked, "merge it onto "+onto+": "+oneLine(err.Error()))
	}
	defer ws.Close()
	// clear removes the landing's workspace, caches and thread once it
	// is over (landed, or given up on); a kill before keeps them, to
	// continue.
	clear := func() {
		_, err := ws.Remove()
		_, uerr := removeUnitState(plan, id)
		err = errors.Join(err, uerr)
		if _, derr := d.Checkpointer.Delete(context.WithoutCancel(ctx), thread, 0); derr != nil {
			err = errors.Join(err, derr)
		}
		if err != nil {
			d.logf("land %s: clean up after it: %v\n", id, err)
		}
	}
	g, _, err := d.graph(t, ws, plan, slot{id: t.ID, onto: onto})
	if err != nil {
		clear()
		return failed(LandBlocked, oneLine(err.Error()))
	}
	s, err := d.landChecked(ctx, plan, onto, t, ws, opts, g, thread)
	switch {
	case err != nil && ctx.Err() != nil:
		return LandRecord{}, false, err
	case errors.Is(err, statgraph.ErrInterrupted):
		return LandRecord{State: LandWaiting, Reason: "its agent's attempts ran out and it waits for an answer (retry, skip or abort): run statgraph land in a terminal"}, false, nil
	case err != nil:
		clear()
		return failed(LandBlocked, oneLine(err.Error()))
	case s.Phase != agents.PhaseDone:
		clear()
		if reason := unresolvedConflict(ws, opts, s); reason != "" {
			return failed(LandConflict, fmt.Sprintf("its branch conflicts with %s in %s and its agent did not resolve it in %d attempts; merge %s into %s by hand, or change the task's branch, and run statgraph land again",
				onto, strings.Join(ws.Conflicts(), ", "), s.RetryCount, onto, branch))
		}
		why := strings.Join(s.Verification.Errors, ", ")
		if s.Phase == agents.PhaseSkipped {
			why = "skipped by the operator with checks failing"
		}
		return failed(LandChecks, fmt.Sprintf("its checks fail on the merge with %s (%s) after %d attempts: %s; fix it on %s and run statgraph land again",
			onto, target[:min(12, len(target))], s.RetryCount, oneLine(why), branch))
	}
	landAt(pointChecked, id)
	if err := ws.Finish(ctx); err != nil {
		if ctx.Err() != nil {
			return LandRecord{}, false, err
		}
		if now, _ := revParse(ctx, plan.Repo, "refs/heads/"+onto); now != target {
			clear()
			return LandRecord{}, true, nil
		}
		return failed(LandBlocked, fmt.Sprintf("move %s to the checked merge: %v", onto, oneLine(err.Error())))
	}
	landAt(pointMoved, id)
	commit, err := revParse(ctx, plan.Repo, "refs/heads/"+onto)
	if err != nil {
		return LandRecord{}, false, err
	}
	clear()
	return LandRecord{State: LandLanded, Commit: commit}, false, nil
}

// landWorkspace prepares the landing's workspace: a new one merging the
// unit's branch onto the target's tip, or the one a killed Land left when
// it was made from the same tips. One made from an older tip is removed
// with the landing's thread, and a new one made.
func (d *Dispatcher) landWorkspace(ctx context.Context, o workspace.Options, thread string) (*workspace.Workspace, error) {
	_, statErr := os.Stat(filepath.Join(o.Root, o.TaskID, ".git"))
	if statErr == nil {
		ws, err := workspace.Prepare(ctx, o)
		if err == nil || ctx.Err() != nil {
			return ws, err
		}
		if _, err := workspace.RemoveDir(o.Root, o.TaskID); err != nil {
			return nil, err
		}
	}
	if _, err := d.Checkpointer.Delete(ctx, thread, 0); err != nil {
		return nil, fmt.Errorf("start the landing of task %s afresh: %w", o.TaskID, err)
	}
	return workspace.Prepare(ctx, o)
}

// landChecked returns the landing's state once its workspace passed its
// checks or its agent gave up: a merge checked before (its thread ended
// done: a kill came before the target moved) is not checked again; a
// thread a kill stopped continues; otherwise the merge is checked, and a
// conflict or a failure starts the unit's agent on it.
func (d *Dispatcher) landChecked(ctx context.Context, plan Plan, onto string, t tasks.Task, ws *workspace.Workspace, o workspace.Options, g *statgraph.Graph[agents.TaskState], thread string) (agents.TaskState, error) {
	snap, err := g.State(ctx, thread)
	switch {
	case err == nil && len(snap.Next) == 0 && len(snap.Interrupts) == 0 && snap.State.Phase == agents.PhaseDone:
		return snap.State, nil
	case err != nil && !errors.Is(err, statgraph.ErrNoCheckpoint):
		return agents.TaskState{}, fmt.Errorf("read the landing's checkpoint from the run store: %w", err)
	}
	var v verifier.Verification
	if err != nil && len(ws.Conflicts()) == 0 {
		checks, workdir := unitChecks(t, ws, d.sandbox(t, ws.Dir(), plan))
		v, err = agents.ChecksVerifier{Checks: checks, Workdir: workdir}.Verify(ctx, agents.TaskState{})
		if err != nil {
			return agents.TaskState{}, fmt.Errorf("check the merge: %w", err)
		}
		if v.Passed() {
			return agents.TaskState{Phase: agents.PhaseDone}, nil
		}
	}
	in := agents.TaskState{Task: landTask(t, ws, o, onto), Verification: v, MaxRetries: t.Retries()}
	return d.invoke(ctx, g, thread, slot{id: t.ID}, t, in, time.Now(), nil, nil)
}

// landTask is the task its agent gets when the unit's merge onto the
// target conflicts or fails its checks: the task as it was, with what
// happened in front (the conflicts, as stacking shows them).
func landTask(t tasks.Task, ws *workspace.Workspace, o workspace.Options, onto string) agents.Task {
	task := withConflicts(agents.Task{ID: t.ID, Title: t.Title, Description: t.Description, Details: t.Details,
		TestStrategy: t.TestStrategy, OnExhausted: t.OnExhausted}, ws, o)
	intro := fmt.Sprintf("Land this task on %s. The task is done on its branch %s; it is now merged onto the current tip of %s, "+
		"where other work has landed since the task began, and %s moves to the merge only once the task's checks pass on it. ",
		onto, o.Merge[0], onto, onto)
	if len(ws.Conflicts()) > 0 {
		intro += "Git could not merge some files: resolve them as below, keeping the work of both sides."
	} else {
		intro += "The checks fail on the merge (the feedback says how): make them pass, keeping the work of both sides."
	}
	task.Details = intro + "\n\n" + task.Details
	return task
}
