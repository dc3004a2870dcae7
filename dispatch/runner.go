package dispatch

// This file is the one seam between the dispatcher and a queue of workers:
// the dispatcher decides which unit runs when (dependency order, blocked
// units, saves of the tasks file, progress and summary); a Runner decides
// where it runs. Without one, units run in this process (runUnit).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/tasks"
)

// Runner runs ready units somewhere else than in the dispatcher's process,
// e.g. on workers taking them from a queue (package queue). The dispatcher
// calls RunUnit once per ready unit, from its own goroutine, concurrently
// for different units, after saving the file with the unit in progress.
type Runner interface {
	// RunUnit runs unit id of plan, whose dependencies deps are done, and
	// returns its result and published branch ("" for none). report sends
	// progress events of the unit (EventStart, EventProgress) to the
	// dispatcher's Report. An error means no result is known: the unit is
	// recorded interrupted with the error as the reason, and a later run
	// asks the Runner again. RunUnit returns when ctx is cancelled.
	RunUnit(ctx context.Context, plan Plan, id string, deps []string, report func(Event)) (tasks.Outcome, string, error)
}

// RunOne runs unit id in this process, through the same steps as Run (its
// workspace stacked on its dependencies' published branches in Repo, the
// sandbox, infrastructure errors, publishing) but without the dispatch
// loop: it does not save the file. It returns the unit's result and
// branch; the result is also recorded in File. A worker taking units from
// a queue calls it with File parsed from the coordinator's snapshot.
// It fails, changing nothing, when the sandbox cannot be set up (unless
// NoSandbox, about which RunOne writes nothing: the caller warns once) or
// the plan's state directory cannot be made. It is safe to call
// concurrently for different units of one File.
func (d *Dispatcher) RunOne(ctx context.Context, id string) (UnitResult, tasks.Outcome, error) {
	if d.Checkpointer == nil {
		return UnitResult{}, tasks.Outcome{}, errors.New("dispatch: RunOne needs a Checkpointer (the run store)")
	}
	if !d.NoSandbox { // the caller warns about NoSandbox once, not per unit
		if err := d.checkSandbox(); err != nil {
			return UnitResult{}, tasks.Outcome{}, err
		}
	}
	plan, err := d.plan()
	if err != nil {
		return UnitResult{}, tasks.Outcome{}, err
	}
	if err := plan.Ensure(); err != nil {
		return UnitResult{}, tasks.Outcome{}, err
	}
	if err := agents.RemoveStaleHomes(plan.HomeDir(id)); err != nil {
		return UnitResult{}, tasks.Outcome{}, err
	}
	if _, ok := d.File.Task(id); !ok {
		return UnitResult{}, tasks.Outcome{}, fmt.Errorf("dispatch: no unit %q in %s: %w", id, d.File.Path, tasks.ErrNoTask)
	}
	var deps []string
	for _, u := range d.File.Units() {
		if u.ID == id {
			deps = u.Deps
		}
	}
	var rec tasks.Outcome
	res := d.runUnit(ctx, plan, id, deps, make(chan struct{}, 1), &rec)
	return res, rec, nil
}

// runElsewhere hands unit id to the Runner and records its result in the
// file (not yet saved) and in rec, as runUnit does for a unit run here.
func (d *Dispatcher) runElsewhere(ctx context.Context, plan Plan, id string, deps []string, rec *tasks.Outcome) UnitResult {
	t, _ := d.File.Task(id)
	start := time.Now()
	d.report(Event{Kind: EventStart, Unit: id, Title: t.Title, MaxAttempts: t.Retries()})
	r, branch, err := d.Runner.RunUnit(ctx, plan, id, deps, d.report)
	if err != nil {
		r = tasks.Outcome{Status: tasks.StatusInterrupted, Reason: oneLine(err.Error()), RetryCount: t.RetryCount, ErrorHistory: t.ErrorHistory}
		branch = ""
	}
	*rec = r
	res := UnitResult{ID: id, Title: t.Title, Status: r.Status, Reason: r.Reason, Branch: branch, Attempts: r.RetryCount, Elapsed: time.Since(start)}
	if err := d.File.Apply(id, r); errors.Is(err, tasks.ErrNoTask) {
		res.Reason = "removed from the tasks file during the run; result not written back"
	} else if err != nil {
		res.Status, res.Reason = tasks.StatusFailed, err.Error()
	}
	d.report(Event{Kind: EventFinish, Unit: id, Title: t.Title, Status: res.Status, Reason: res.Reason,
		Attempt: r.RetryCount, Elapsed: res.Elapsed, Branch: branch})
	return res
}
