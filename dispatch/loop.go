package dispatch

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"time"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/tasks"
)

// loop.go is the dispatch loop: it starts ready units, records what they
// end with, and saves the file. A round costs what changed: readiness says
// which units became ready or blocked, the journal makes each outcome
// durable with one small append, and saver writes the whole file only as
// often as its cost allows.

// Run dispatches every runnable unit (pending, in-progress or interrupted)
// until none is left that can run. When ctx is cancelled, running units
// stop at once (their model calls and commands are cancelled; the node that
// was running is not checkpointed, so resume runs it again), are marked
// interrupted, and Run returns ctx's error with the summary so far. A unit
// past its deadline (its "timeout", else TaskTimeout) ends failed.
// When the sandbox cannot be set up and NoSandbox is false, Run changes
// nothing and returns an error wrapping verifier.ErrSandboxUnavailable.
//
// Each unit's outcome is durable (in the plan's results journal, see
// journal.go) before the loop acts on it; the tasks file itself is written
// at most once per round and, when writing it is costly (a large file),
// less often (see saver), and always before Run returns. A Run that
// follows a killed one first applies the journal's outcomes to the file.
//
// With a Tracer, the run is traced (trace.go).
func (d *Dispatcher) Run(ctx context.Context) (Summary, error) {
	ctx, end := d.startRunSpan(ctx)
	s, err := d.run(ctx)
	end(s, err)
	return s, err
}

func (d *Dispatcher) run(ctx context.Context) (Summary, error) {
	if d.Checkpointer == nil {
		return Summary{}, errors.New("dispatch: the dispatcher needs a Checkpointer (the run store)")
	}
	if d.Runner == nil {
		if err := d.checkSandbox(); err != nil {
			return Summary{}, err
		}
	}
	d.noteOpenNetwork()
	plan, err := d.plan()
	if err != nil {
		return Summary{}, err
	}
	if err := plan.Ensure(); err != nil {
		return Summary{}, err
	}
	removeStaleTemps(d.File.Path)
	// A killed run may have left its agents' private homes, which hold
	// copies of their credentials.
	if err := agents.RemoveStaleHomes(plan.HomesDir()); err != nil {
		return Summary{}, err
	}
	// held: the file could not take the replayed outcomes yet (the user's
	// edit in progress does not parse); the journal keeps them until the
	// loop's first save that writes.
	jr, held, err := tasks.OpenJournal(d.File, plan.Journal())
	if err != nil {
		return Summary{}, err
	}
	defer jr.Close()
	jobs := d.Jobs
	if jobs <= 0 {
		jobs = runtime.NumCPU()
	}
	units := d.File.Units()
	status := make(map[string]string, len(units))
	results := make(map[string]*UnitResult, len(units))
	for _, u := range units {
		t, _ := d.File.Task(u.ID)
		status[u.ID] = t.Status
		results[u.ID] = &UnitResult{ID: u.ID, Title: t.Title, Status: t.Status, Reason: t.StatusReason, Attempts: t.RetryCount}
		if t.Status == tasks.StatusDone && d.Runner == nil {
			results[u.ID].Branch = d.republish(ctx, plan, u.ID)
		}
	}
	started := map[string]bool{} // units this run already took up: never twice
	ready := newReadiness(units, status, started)

	finished := make(chan unitOutcome)
	// changed tells the loop that a running unit recorded progress
	// (retry_count, error_history) in the file, to be saved.
	changed := make(chan struct{}, 1)
	running := 0
	defer d.sweepLayers(plan, true) // after every unit has stopped
	var wg sync.WaitGroup
	defer wg.Wait()
	var runErr error
	sv := saver{file: d.File, dirty: held}
	// schedule blocks the units whose dependencies failed and marks the
	// ready ones in progress, in memory, and returns the units to start.
	schedule := func() ([]string, error) {
		for _, b := range ready.takeBlocked() {
			status[b.ID] = tasks.StatusBlocked
			r := results[b.ID]
			r.Status, r.Reason = tasks.StatusBlocked, b.Reason
			if err := d.File.SetStatus(b.ID, tasks.StatusBlocked, b.Reason); err != nil {
				return nil, err
			}
			sv.dirty = true
			d.report(Event{Kind: EventBlocked, Unit: b.ID, Title: r.Title, Status: tasks.StatusBlocked, Reason: b.Reason})
		}
		var start []string
		if err := d.budgetSpent(); err != nil {
			d.holdReady(ready, status, results, err)
			sv.dirty = true
			return nil, nil
		}
		for running+len(start) < jobs && !d.stopping() {
			id, ok := ready.pop()
			if !ok {
				break
			}
			status[id] = tasks.StatusInProgress
			if err := d.File.SetStatus(id, tasks.StatusInProgress, ""); err != nil {
				return nil, err
			}
			sv.dirty = true
			start = append(start, id)
		}
		return start, nil
	}
	record := func(o unitOutcome) {
		running--
		status[o.res.ID] = o.res.Status
		*results[o.res.ID] = o.res
		ready.set(o.res.ID, o.res.Status)
		jr.Add(o.res.ID, tasks.Outcome{Status: o.res.Status, Reason: o.res.Reason, RetryCount: o.rec.RetryCount, ErrorHistory: o.rec.ErrorHistory, FailedAt: o.rec.FailedAt})
		sv.dirty = true
	}
	// Each round records what changed (units that finished, units blocked
	// or about to start), makes the outcomes durable in the journal, saves
	// the file when that is due, and then starts the ready units. An error
	// (the file or the journal cannot be written) ends the run: no new unit
	// starts, and the running ones are still waited for, since each of them
	// sends on finished.
	for {
		var start []string
		if ctx.Err() == nil && runErr == nil {
			start, runErr = schedule()
		}
		if err := jr.Flush(); err != nil && runErr == nil {
			runErr = err
		}
		last := running == 0 && len(start) == 0
		if sv.dirty && (last || runErr != nil || sv.due(time.Now())) {
			gen := d.File.Generation()
			wrote, err := sv.save()
			if err != nil {
				if runErr == nil {
					runErr = err
				}
				start = nil
			} else if wrote {
				if err := jr.Clear(); err != nil && runErr == nil {
					runErr = err
				}
			}
			d.logNotes()
			if d.File.Generation() != gen {
				// The user edited the file: take in the tasks added or
				// changed, and look again for units that can start.
				units = d.refreshUnits(units, status, results, started)
				ready = newReadiness(units, status, mergeStarted(started, start))
				if len(start) == 0 && ctx.Err() == nil && runErr == nil {
					continue
				}
			}
		}
		for _, id := range start {
			d.startUnit(ctx, plan, ready.deps(id), id, &wg, finished, changed)
			started[id] = true
			running++
		}
		if running == 0 {
			break // last was true, so this round saved
		}
		select {
		case o := <-finished:
			record(o)
		case <-changed:
			sv.dirty = true
			continue // save the progress when due
		case <-sv.timer():
			continue
		}
		for drained := false; !drained; {
			select {
			case o := <-finished:
				record(o)
			default:
				drained = true
			}
		}
	}
	sv.stop()
	if runErr == nil {
		runErr = ctx.Err()
	}
	if runErr == nil && d.stopping() {
		runErr = ErrStopped
	}
	return d.summary(units, results), runErr
}

// startUnit runs ready unit id in a goroutine of wg, which sends its
// outcome on finished. It is the one place a ready unit is handed to
// something that runs it; deps is the loop's view of its dependencies,
// taken before the unit starts.
func (d *Dispatcher) startUnit(ctx context.Context, plan Plan, deps []string, id string, wg *sync.WaitGroup, finished chan<- unitOutcome, changed chan<- struct{}) {
	wg.Go(func() {
		var r Runner = local{d: d, changed: changed}
		if d.Runner != nil {
			r = d.Runner
		}
		var rec tasks.Outcome
		res := d.runOn(ctx, r, plan, id, deps, &rec)
		finished <- unitOutcome{res: res, rec: rec}
	})
}

// holdReady leaves every ready unit pending, with the reason that the
// run's budget is spent (err, from its Check), and reports each as held:
// no new work starts once the budget is spent.
func (d *Dispatcher) holdReady(ready *readiness, status map[string]string, results map[string]*UnitResult, err error) {
	reason := budgetReason(err)
	for {
		id, ok := ready.pop()
		if !ok {
			return
		}
		status[id] = tasks.StatusPending
		r := results[id]
		r.Status, r.Reason = tasks.StatusPending, reason
		if d.File.SetStatus(id, tasks.StatusPending, reason) == nil {
			d.report(Event{Kind: EventHeld, Unit: id, Title: r.Title, Status: tasks.StatusPending, Reason: reason})
		}
	}
}

// budgetSpent returns an error matching llm.ErrBudget, naming the run's
// budget, when it is spent; nil when there is none or it is not.
func (d *Dispatcher) budgetSpent() error {
	return llm.NewBudget(0, d.Budget).Check(0)
}

// budgetReason is the reason a unit left pending because the run's
// budget is spent (err says which and how much) gives.
func budgetReason(err error) string {
	return "not started, the run's budget is spent: " + oneLine(err.Error())
}

// unitOutcome is what a unit's goroutine hands the loop: its result for the
// summary, and what it recorded in the file (for the journal).
type unitOutcome struct {
	res UnitResult
	rec tasks.Outcome
}

// mergeStarted returns started with the ids of start added (the units the
// loop is about to start count as started for a new readiness index).
func mergeStarted(started map[string]bool, start []string) map[string]bool {
	if len(start) == 0 {
		return started
	}
	m := make(map[string]bool, len(started)+len(start))
	for id := range started {
		m[id] = true
	}
	for _, id := range start {
		m[id] = true
	}
	return m
}

func (d *Dispatcher) summary(units []tasks.Unit, results map[string]*UnitResult) Summary {
	var s Summary
	for _, u := range units {
		s.Units = append(s.Units, *results[u.ID])
	}
	return s
}

// saver decides when the dispatch loop writes the tasks file. A save
// renders and fsyncs the whole file, so its cost grows with the file; the
// loop saves at once when the last save was cheap, and otherwise waits
// until saveGapFactor times the last save's duration has passed, so that
// saving takes at most about 1/(saveGapFactor+1) of the loop's time however
// large the file. Outcomes do not wait for it: the journal holds them.
// While it saves, the loop starts nothing, so the units that finish
// meanwhile leave their slots idle: a file of 10,000 tasks (1 MB) takes
// ~0.45 s to save on a slow disk, mostly its fsync (BenchmarkSave), so the
// loop keeps that to a twentieth of its time.
type saver struct {
	file  *tasks.File
	dirty bool          // the file changed in memory since the last save
	last  time.Time     // when the last save ended
	cost  time.Duration // how long it took
	t     *time.Timer   // fires when a deferred save is due; nil when none is armed
	// held is set when the last save wrote nothing because the user's
	// edit of the file does not parse yet: the next save is tried at the
	// next event, not on a timer, as it does not get cheaper by waiting.
	held bool
}

// saveGapFactor is how many times a save's own duration the loop waits
// before the next save.
const saveGapFactor = 19

// due reports whether a save may be done now.
func (s *saver) due(now time.Time) bool {
	return now.Sub(s.last) >= saveGapFactor*s.cost
}

// save writes the file and reports whether it wrote all of statgraph's
// changes (false when the user's edit in progress made it wait).
func (s *saver) save() (bool, error) {
	begin := time.Now()
	wrote, err := s.file.TrySave()
	s.last = time.Now()
	s.cost = s.last.Sub(begin)
	if err == nil && wrote {
		s.dirty = false
	}
	s.held = err == nil && !wrote
	return wrote, err
}

// timer returns a channel that fires when a deferred save becomes due, or
// nil (blocks forever) when nothing waits to be saved.
func (s *saver) timer() <-chan time.Time {
	if !s.dirty || s.held {
		return nil
	}
	wait := time.Until(s.last.Add(saveGapFactor * s.cost))
	if s.t == nil {
		s.t = time.NewTimer(max(wait, 0))
	} else {
		s.t.Reset(max(wait, 0))
	}
	return s.t.C
}

func (s *saver) stop() {
	if s.t != nil {
		s.t.Stop()
	}
}
