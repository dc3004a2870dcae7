package dispatch

// This file is the one seam between the dispatcher and what runs a unit:
// the dispatcher decides which unit runs when (dependency order, blocked
// units, saves of the tasks file, progress and summary) and records each
// outcome (runOn); a Runner decides where the unit runs: in this process
// (local, unit.go) or on workers taking units from a queue (queue.Runner).

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/tasks"
)

// Runner runs ready units: in the dispatcher's process (the default), or
// somewhere else, e.g. on workers taking them from a queue (package
// queue). The dispatcher calls RunUnit once per ready unit, from its own
// goroutine, concurrently for different units, after saving the file with
// the unit in progress, and records what it returns in the file.
type Runner interface {
	// RunUnit runs unit id of plan, whose dependencies deps are done, and
	// returns what the run ended with. report sends progress events of
	// the unit (EventProgress) to the dispatcher's Report. An error means
	// no outcome is known: the unit is recorded interrupted with the
	// error as the reason, and a later run asks the Runner again. RunUnit
	// returns when ctx is cancelled.
	RunUnit(ctx context.Context, plan Plan, id string, deps []string, report func(Event)) (Ran, error)
}

// Ran is what a Runner reports of one run of a unit.
type Ran struct {
	Outcome tasks.Outcome // what the file records
	Branch  string        // the unit's published branch; "" for none
	Tokens  int           // tokens its model calls used; 0 when not known
	// Stop, when set, stops the run with this reason: no new unit starts
	// (the account's quota or credit is exhausted).
	Stop  string
	Usage llm.Usage // its spend, tokens and cost; zero when not known
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
	res := d.runOn(ctx, local{d: d, changed: make(chan struct{}, 1)}, plan, id, deps, &rec)
	return res, rec, nil
}

// runOn runs unit id on r and records its outcome in the file (not yet
// saved) and in rec, reporting the unit's start and finish. It is the one
// path of every unit, whoever runs it.
func (d *Dispatcher) runOn(ctx context.Context, r Runner, plan Plan, id string, deps []string, rec *tasks.Outcome) UnitResult {
	t, _ := d.File.Task(id)
	start := time.Now()
	d.report(Event{Kind: EventStart, Unit: id, Title: t.Title, MaxAttempts: t.Retries()})
	ran, err := r.RunUnit(ctx, plan, id, deps, d.report)
	if err != nil {
		ran = Ran{Outcome: tasks.Outcome{Status: tasks.StatusInterrupted, Reason: oneLine(err.Error()), RetryCount: t.RetryCount, ErrorHistory: t.ErrorHistory}}
	}
	o := ran.Outcome
	*rec = o
	res := UnitResult{ID: id, Title: t.Title, Status: o.Status, Reason: o.Reason, Branch: ran.Branch, Attempts: o.RetryCount, Tokens: ran.Tokens, Usage: ran.Usage.OrTokens(ran.Tokens), Elapsed: time.Since(start),
		ParkedUntil: o.ParkedUntil, stop: ran.Stop}
	if err := d.File.Apply(id, o); errors.Is(err, tasks.ErrNoTask) {
		res.Reason = "removed from the tasks file during the run; result not written back"
	} else if err != nil {
		res.Status, res.Reason = tasks.StatusFailed, err.Error()
	}
	d.sweepLayers(plan, false) // the unit no longer needs its dependencies' build caches
	d.report(Event{Kind: EventFinish, Unit: id, Title: t.Title, Status: res.Status, Reason: res.Reason,
		Attempt: o.RetryCount, Elapsed: res.Elapsed, Tokens: res.Tokens, Usage: res.Usage, Branch: ran.Branch})
	if o.Status == tasks.StatusParked && o.ParkedUntil != nil {
		d.report(Event{Kind: EventParked, Unit: id, Title: t.Title, Status: o.Status, Reason: res.Reason, Attempt: o.RetryCount, Until: *o.ParkedUntil})
	}
	return res
}
