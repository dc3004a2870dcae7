package dispatch

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/statgraph/statgraph/agents"
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
// past its deadline (its "timeout", else TaskTimeout) ends failed. A unit
// parked by a usage limit (park.go) runs again at its reset time: Run
// returns only once no unit is running or parked (or ctx is cancelled,
// Stop closed, or the quota is found exhausted, which returns an error
// matching llm.ErrQuota).
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
	d.notePrices()
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
	started := map[string]bool{} // units this run already took up: never twice, unless parked and due again
	took := false                // a unit was taken up (takeUp): the file is to be saved
	for _, u := range units {
		res, o, ok := d.takeUp(ctx, plan, u.ID, status[u.ID])
		if !ok {
			continue
		}
		if err := d.File.Apply(u.ID, o); err != nil {
			return Summary{}, err
		}
		jr.Add(u.ID, o)
		status[u.ID], *results[u.ID], started[u.ID], took = o.Status, res, true, true
	}
	// parked holds the units waiting for a usage limit's reset: those a
	// killed run left parked, and those parked during this run.
	var parked parking
	defer parked.stop()
	for _, u := range units {
		t, _ := d.File.Task(u.ID)
		if t.Status != tasks.StatusParked || t.ParkedUntil == nil || !t.ParkedUntil.After(time.Now()) {
			continue
		}
		if t.ParkedUntil.Sub(time.Now()) > d.parkMax() {
			continue // it runs now: the caller asked for a shorter wait than its reset
		}
		parked.add(u.ID, *t.ParkedUntil)
		started[u.ID] = true
		results[u.ID].ParkedUntil = t.ParkedUntil
	}
	ready := newReadiness(units, status, started)

	finished := make(chan unitOutcome)
	// changed tells the loop that a running unit recorded progress
	// (retry_count, error_history) in the file, to be saved.
	changed := make(chan struct{}, 1)
	running := 0
	serial := map[string]bool{}     // the serial unit running, if any
	defer d.sweepLayers(plan, true) // after every unit has stopped
	var wg sync.WaitGroup
	defer wg.Wait()
	var runErr error
	stopped := "" // why no unit starts any more: the run's budget is spent
	sv := saver{file: d.File, dirty: held || took}
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
		if stopped == "" && ready.any() {
			if err := d.Budget.Check(0); err != nil {
				stopped = fmt.Sprintf("not started: %v; then run statgraph resume", oneLine(err.Error()))
				if err := d.holdForBudget(units, status, started, results, stopped); err != nil {
					return nil, err
				}
				sv.dirty = true
			}
		}
		for running+len(start) < jobs && !d.stopping() && stopped == "" && len(serial) == 0 {
			id, ok := ready.peek()
			if !ok {
				break
			}
			// A serial unit ("land": "serial") runs alone: it waits for
			// the running units to end, and none starts beside it.
			alone := d.serial(id)
			if alone && running+len(start) > 0 {
				break
			}
			ready.pop()
			if alone {
				serial[id] = true
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
		delete(serial, o.res.ID)
		status[o.res.ID] = o.res.Status
		*results[o.res.ID] = o.res
		ready.set(o.res.ID, o.res.Status)
		jr.Add(o.res.ID, tasks.Outcome{Status: o.res.Status, Reason: o.res.Reason, RetryCount: o.rec.RetryCount, ErrorHistory: o.rec.ErrorHistory, FailedAt: o.rec.FailedAt, ParkedUntil: o.rec.ParkedUntil})
		sv.dirty = true
		parked.announced = false
		if o.res.Status == tasks.StatusParked && o.rec.ParkedUntil != nil {
			parked.add(o.res.ID, *o.rec.ParkedUntil)
		}
		if o.res.stop != "" && runErr == nil {
			runErr = &quotaStop{unit: o.res.ID, reason: o.res.stop}
		}
	}
	// wake makes the parked units whose reset came ready again.
	wake := func(now time.Time) {
		for _, id := range parked.due(now) {
			delete(started, id)
			ready.again(id)
		}
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
			parked.announced = false
		}
		// The run stays up while a unit is parked, unless it is ending.
		waitParked := len(parked.until) > 0 && ctx.Err() == nil && runErr == nil && !d.stopping()
		if running == 0 && !waitParked {
			break // last was true, so this round saved
		}
		if running == 0 && !parked.announced {
			parked.announced = true
			d.report(Event{Kind: EventAllParked, Until: parked.first()})
		}
		// With only parked units left, nothing else wakes the loop when
		// the run is cancelled or stopped.
		var done, stop <-chan struct{}
		if running == 0 {
			done, stop = ctx.Done(), d.Stop
		}
		select {
		case o := <-finished:
			record(o)
		case <-changed:
			sv.dirty = true
			continue // save the progress when due
		case <-sv.timer():
			continue
		case now := <-parked.timer():
			wake(now)
			continue
		case <-done:
			continue
		case <-stop:
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
	sum := d.summary(units, results)
	sum.Stopped = stopped
	return sum, runErr
}

// holdForBudget gives every unit not started that would run the reason
// why it does not: the run's budget is spent. A pending or interrupted
// unit keeps its status, one a killed run left in progress becomes
// interrupted. Resume runs them.
func (d *Dispatcher) holdForBudget(units []tasks.Unit, status map[string]string, started map[string]bool, results map[string]*UnitResult, reason string) error {
	for _, u := range units {
		st := status[u.ID]
		if started[u.ID] || !tasks.Runnable(st) {
			continue
		}
		switch st {
		case "":
			st = tasks.StatusPending
		case tasks.StatusInProgress:
			st = tasks.StatusInterrupted
			status[u.ID], results[u.ID].Status = st, st
		}
		if err := d.File.SetStatus(u.ID, st, reason); err != nil {
			return err
		}
		results[u.ID].Status, results[u.ID].Reason = st, reason
		d.report(Event{Kind: EventHeld, Unit: u.ID, Title: results[u.ID].Title, Status: st, Reason: reason})
	}
	return nil
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

// unitOutcome is what a unit's goroutine hands the loop: its result for the
// summary, and what it recorded in the file (for the journal).
type unitOutcome struct {
	res UnitResult
	rec tasks.Outcome
}

// serial reports whether unit id runs alone ("land": "serial").
func (d *Dispatcher) serial(id string) bool {
	t, ok := d.File.Task(id)
	return ok && t.Land == tasks.LandSerial
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
