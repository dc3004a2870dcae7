package dispatch

// This file holds the plan operations that work on finished units as a
// whole: integrating their branches into one, and cleaning up after them.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/statgraph/checkpoint"
	"github.com/statgraph/statgraph/statgraph/gate"
	"github.com/statgraph/statgraph/tasks"
	"github.com/statgraph/statgraph/verifier"
)

// Integration is the outcome of Integrate.
type Integration struct {
	// Branch is the branch published, "" when nothing was published.
	Branch string
	// Units has one entry per done unit, in dependency order.
	Units []IntegratedUnit
	// Checks are the results of the file's default test_cmd and lint_cmd
	// on the integrated tree; empty when the file has neither.
	Checks []verifier.CheckResult
}

// IntegratedUnit says what became of one done unit's branch.
type IntegratedUnit struct {
	ID, Branch string
	// Merged is true when the branch is part of the integration.
	Merged bool
	// Conflicts are the paths the branch conflicted on with the units
	// merged before it; it was then left out.
	Conflicts []string
	// Note says why a unit is not merged when it did not conflict (e.g.
	// it has no published branch).
	Note string
}

// Failed reports whether a unit was left out or a blocking check failed.
func (in Integration) Failed() bool {
	for _, u := range in.Units {
		if !u.Merged {
			return true
		}
	}
	blocking, _ := gate.Enforce(in.Checks, verifier.CheckResult.Verdict)
	return len(blocking) > 0
}

// Integrate merges the published branches of every done unit, in
// dependency order, into one branch in a scratch workspace (a branch that
// conflicts with those merged before it is left out and its paths
// reported; an existing branch of that name is the start, so integrating
// again adds to it), runs the file's default test_cmd and lint_cmd on the result,
// and publishes it as branch in the repository, whatever the checks say.
// The scratch workspace is removed afterwards. It fails when the branch
// cannot be published (e.g. it exists and holds commits the integration
// does not); every unit is then reported left out with that error as its
// note. Every unit left out has a reason: its conflicts or its Note. The
// caller holds the file's lock.
func (d *Dispatcher) Integrate(ctx context.Context, branch string) (out Integration, err error) {
	defer func() { out.explain(err) }()
	plan, err := d.plan()
	if err != nil {
		return Integration{}, err
	}
	repo := plan.Repo
	var names []string
	index := map[string]int{}
	for _, id := range doneInOrder(d.File) {
		b := plan.Branch(id)
		pub, err := workspace.PublishedBranches(repo, []string{b})
		if err != nil {
			return out, err
		}
		u := IntegratedUnit{ID: id, Branch: b}
		if len(pub) == 0 {
			u.Note = "no published branch (done before statgraph ran it)"
		} else {
			index[b] = len(out.Units)
			names = append(names, b)
		}
		out.Units = append(out.Units, u)
	}
	if len(names) == 0 {
		return out, nil
	}
	// An existing integration branch is the base, so the new integration
	// adds to it (a fast-forward) and branches it holds are not merged again.
	existing, err := workspace.PublishedBranches(repo, []string{branch})
	if err != nil {
		return out, err
	}
	names = append(existing, names...)
	root := filepath.Join(plan.Dir, "integrate")
	const scratch = "integration"
	if _, err := workspace.RemoveDir(root, scratch); err != nil {
		return out, err
	}
	ws, err := workspace.Prepare(ctx, workspace.Options{Source: repo, TaskID: scratch, Root: root, Branch: branch,
		Base: names[0], Merge: names[1:], SkipConflicts: true})
	if err != nil {
		return out, fmt.Errorf("integrate into %s: %w", branch, err)
	}
	defer ws.Remove()
	defer removeAll(plan.CacheDir(scratch)) // its checks' caches go with the scratch workspace
	for _, n := range names[len(existing):] {
		out.Units[index[n]].Merged = true
	}
	for _, sk := range ws.Skipped() {
		u := &out.Units[index[sk.Branch]]
		u.Merged, u.Conflicts = false, sk.Paths
	}
	// The integrated branch holds code the tasks' models wrote: its checks
	// run in the sandbox like any task's, with the defaults' network setting.
	def := d.File.Defaults
	checks := testAndLint(def.TestCmd, def.LintCmd, d.sandbox(tasks.Task{ID: scratch, Sandbox: def.Sandbox}, ws.Dir(), plan))
	if len(checks) > 0 {
		workdir := ws.Dir()
		if def.Workdir != "" {
			workdir = filepath.Join(workdir, filepath.FromSlash(def.Workdir))
		}
		v, err := verifier.Verify(ctx, workdir, checks)
		if err != nil && ctx.Err() != nil {
			return out, err
		}
		out.Checks = v.Checks
	}
	if err := ws.Finish(ctx); err != nil {
		if errors.Is(err, workspace.ErrDiverged) {
			return out, fmt.Errorf("publish the integration as %s: that branch already exists with commits this integration does not have; "+
				"delete it (git branch -D %s) or choose another name for --integrate", branch, branch)
		}
		return out, fmt.Errorf("publish the integration as %s: %w", branch, err)
	}
	out.Branch = branch
	return out, nil
}

// explain makes sure every unit left out says why: when err stopped the
// integration nothing was published, so no unit is merged and each not
// already explained gets err as its note; a branch git left out without
// naming a conflicting path says so.
func (in *Integration) explain(err error) {
	for i := range in.Units {
		u := &in.Units[i]
		if err != nil {
			u.Merged = false
			if u.Note == "" && len(u.Conflicts) == 0 {
				u.Note = "not integrated, nothing was published: " + oneLine(err.Error())
			}
		}
		if !u.Merged && u.Note == "" && len(u.Conflicts) == 0 {
			u.Note = "git could not merge it with the tasks merged before it (a conflict it names no path for); merge the branch by hand to see why"
		}
	}
}

// doneInOrder returns the ids of the done units, each after the units it
// depends on, otherwise in file order.
func doneInOrder(f *tasks.File) []string {
	units := f.Units()
	byID := make(map[string]tasks.Unit, len(units))
	for _, u := range units {
		byID[u.ID] = u
	}
	status := f.Statuses()
	seen := map[string]bool{}
	var out []string
	var visit func(id string)
	visit = func(id string) {
		if seen[id] {
			return
		}
		seen[id] = true
		for _, dep := range byID[id].Deps {
			visit(dep)
		}
		if status[id] == tasks.StatusDone {
			out = append(out, id)
		}
	}
	for _, u := range units {
		visit(u.ID)
	}
	return out
}

// Cleaned is what Clean removed.
type Cleaned struct {
	// Workspaces maps each unit whose workspace was removed to the bytes
	// freed.
	Workspaces map[string]int64
	// Caches maps each unit whose tool caches or prompts were removed to
	// the bytes freed; "" stands for those of units no longer in the file.
	Caches map[string]int64
	// Threads lists the units whose checkpoints were deleted.
	Threads []string
	// Pruned maps each unit whose thread was pruned (CleanKeeping with
	// keep > 0) to the number of checkpoints deleted.
	Pruned map[string]int
	// Bytes is the sum of Workspaces and Caches.
	Bytes int64
}

// Clean removes the workspaces (its best-of-N candidates' included), tool
// caches, prompts and the checkpoints
// (the run store's threads) of every finished unit: one whose status is
// neither pending, in-progress nor interrupted; and the caches and
// prompts of units no longer in the file and the agents' private homes a
// killed run left. Published branches and what tasks.json records
// (status, retry_count, error_history) stay. A unit still to run keeps
// its workspace and checkpoints, so it can continue. The caller holds the file's lock, so no
// run uses the workspaces.
func (d *Dispatcher) Clean(ctx context.Context) (Cleaned, error) {
	return d.CleanKeeping(ctx, 0)
}

// CleanKeeping is Clean, except that with keep > 0 a finished unit's
// thread keeps its last keep checkpoints (and those they are rebuilt
// from; see checkpoint.Prune) instead of being deleted, so its history can
// still be read. A thread whose run did not finish (a failed task stopped
// mid-graph) is then left whole.
func (d *Dispatcher) CleanKeeping(ctx context.Context, keep int) (Cleaned, error) {
	if d.Checkpointer == nil {
		return Cleaned{}, errors.New("dispatch: Clean needs the Checkpointer (the run store)")
	}
	plan, err := d.plan()
	if err != nil {
		return Cleaned{}, err
	}
	out := Cleaned{Workspaces: map[string]int64{}, Caches: map[string]int64{}, Pruned: map[string]int{}}
	status := d.File.Statuses()
	units := make(map[string]bool, len(status))
	for id := range status {
		units[id] = true
	}
	n, err := removeLeftovers(plan, units)
	if n > 0 {
		out.Caches[""] = n
		out.Bytes += n
	}
	if err != nil {
		return out, err
	}
	for _, id := range slices.Sorted(maps.Keys(status)) {
		if tasks.Runnable(status[id]) {
			continue
		}
		n, err := workspace.RemoveDir(plan.WorkDir(), id)
		if err != nil {
			return out, err
		}
		cn, err := removeCandidateWorkspaces(plan, id)
		if err != nil {
			return out, err
		}
		if n += cn; n > 0 {
			out.Workspaces[id] = n
			out.Bytes += n
		}
		if n, err = removeUnitState(plan, id); err != nil {
			return out, err
		}
		if n > 0 {
			out.Caches[id] = n
			out.Bytes += n
		}
		cps, err := d.Checkpointer.Range(ctx, plan.Thread(id), 0, 0, 1)
		if keep > 0 && err == nil && len(cps) > 0 {
			if len(cps[0].Next) > 0 || len(cps[0].Interrupts) > 0 {
				continue // its run did not finish: keep it whole
			}
			n, err := checkpoint.Prune(ctx, d.Checkpointer, plan.Thread(id), keep)
			if err != nil {
				return out, fmt.Errorf("prune the checkpoints of task %s: %w", id, err)
			}
			if n > 0 {
				out.Pruned[id] = n
			}
			continue
		}
		if err == nil && len(cps) > 0 {
			if _, err := d.Checkpointer.Delete(ctx, plan.Thread(id), 0); err != nil {
				return out, fmt.Errorf("delete the checkpoints of task %s: %w", id, err)
			}
			out.Threads = append(out.Threads, id)
		}
	}
	return out, nil
}
