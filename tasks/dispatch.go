package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/statgraph"
)

// Dispatcher runs the units of a tasks file through the orchestrator graph:
// in dependency order, independent units in parallel, each in its own git
// workspace, with a checkpoint after every step so that a killed run
// continues where it stopped. It records each unit's outcome in the file
// (status, retry_count, error_history, failed_at) and saves the file after
// every change. Workspaces, threads and branches are keyed by the file's
// Plan. A unit is reported done only once its branch is published in the
// repository and readable there (else it is left interrupted, with the
// reason); at the start of Run, done units whose branch is missing or
// unreadable are published again from their workspaces.
//
// The caller holds the file's lock (Lock) for the length of the run.
type Dispatcher struct {
	File *File
	// Repo is the git repository the tasks change; "" means the directory
	// holding the tasks file.
	Repo string
	// StateDir holds workspaces and prompt files; "" means the plan's
	// state directory outside the repository (Plan.Dir of NewPlan(Repo,
	// File.Path, File.Tag)). Threads and branches are keyed by that plan
	// whatever StateDir is.
	StateDir string
	// Checkpointer stores the runs' checkpoints (the run store). Required.
	Checkpointer statgraph.Checkpointer
	// Jobs is how many units run at once; 0 means the number of CPUs.
	Jobs int
	// Model is the model configuration; a task's "model" overrides
	// Model.Model. With no model, units whose executor is the LLM fail
	// with a message saying how to configure one, and units with a command
	// executor run without a planner.
	Model llm.Config
	// Budget is the global token budget shared by every unit; nil means
	// unlimited.
	Budget *llm.Budget
	// Ask answers the escalation of a unit with on_exhausted "ask": it
	// returns "retry", "skip" or "abort". Nil means the unit fails.
	Ask func(ctx context.Context, unit string, e agents.Escalation) (string, error)
	// Report receives progress events; nil means none. It is called from
	// several goroutines, never concurrently for the same unit.
	Report func(Event)
	// Stop, when closed, stops the run gracefully: no new unit starts, and
	// running units stop at their next step boundary (the node that is
	// running finishes and is checkpointed) and are marked interrupted.
	// Cancelling Run's ctx instead stops them at once.
	Stop <-chan struct{}
	// AllowEnv names environment variables passed to agent CLIs (command
	// executors) although they are outside the runner's allow-list or look
	// like secrets, e.g. the agent's own API key. Checks never get them.
	AllowEnv []string
	// TaskTimeout is the deadline of one run of a unit whose tasks.json
	// sets no "timeout"; 0 means none. A unit past its deadline ends failed
	// with a reason naming the deadline; its checkpoints are kept.
	TaskTimeout time.Duration
	// Log receives the orchestrator's own lines ("task 3 FAILED after 3
	// attempts"); nil discards them.
	Log io.Writer
	// NoSandbox runs checks and agent CLIs without the sandbox (see
	// verifier.Sandbox); Run then writes one warning to Log saying what is
	// unprotected. Without it, Run refuses to start when the sandbox cannot
	// be set up (verifier.SandboxAvailable).
	NoSandbox bool
	// GoCacheProg is the program (and first arguments) serving
	// verifier.ServeGoCache, so that sandboxed go commands reuse the user's
	// build cache read-only (see verifier.Sandbox); nil gives each unit a
	// fresh build cache of its own.
	GoCacheProg []string
	// KeepWorkspaces keeps a unit's workspace after it ends; by default it
	// is removed once its branch is published (an interrupted unit's is
	// always kept, to continue in).
	KeepWorkspaces bool
	// Runner, when set, runs the ready units elsewhere (workers taking them
	// from a queue) instead of in this process; see Runner. Run then checks
	// no sandbox and publishes nothing itself: the workers do.
	Runner Runner
}

// EventKind says what a dispatcher Event reports.
type EventKind string

// Dispatcher event kinds.
const (
	EventStart    EventKind = "start"    // a unit starts (or continues)
	EventProgress EventKind = "progress" // a unit's graph moved: Phase, Attempt
	EventFinish   EventKind = "finish"   // a unit ended: Status, Reason
	EventBlocked  EventKind = "blocked"  // a unit was blocked by a dependency
)

// Event is a progress report about one unit.
type Event struct {
	Kind        EventKind
	Unit        string
	Title       string
	Phase       string
	Attempt     int
	MaxAttempts int
	Tokens      int
	Elapsed     time.Duration
	Status      string
	Reason      string
	Branch      string
}

// Summary is the outcome of a run, unit by unit, in file order.
type Summary struct {
	Units []UnitResult
}

// UnitResult is one unit's outcome.
type UnitResult struct {
	ID, Title, Status, Reason, Branch string
	Attempts, Tokens                  int
	Elapsed                           time.Duration
}

// Failed reports whether any unit ended failed, blocked or interrupted.
func (s Summary) Failed() bool {
	for _, u := range s.Units {
		switch u.Status {
		case StatusFailed, StatusBlocked, StatusInterrupted, StatusInProgress:
			return true
		}
	}
	return false
}

// Run dispatches every runnable unit (pending, in-progress or interrupted)
// until none is left that can run. When ctx is cancelled, running units
// stop at once (their model calls and commands are cancelled; the node that
// was running is not checkpointed, so resume runs it again), are marked
// interrupted, and Run returns ctx's error with the summary so far. A unit
// past its deadline (its "timeout", else TaskTimeout) ends failed.
// When the sandbox cannot be set up and NoSandbox is false, Run changes
// nothing and returns an error wrapping verifier.ErrSandboxUnavailable.
func (d *Dispatcher) Run(ctx context.Context) (Summary, error) {
	if d.Checkpointer == nil {
		return Summary{}, errors.New("tasks: the dispatcher needs a Checkpointer (the run store)")
	}
	if d.Runner == nil {
		if err := d.checkSandbox(); err != nil {
			return Summary{}, err
		}
	}
	plan, err := d.plan()
	if err != nil {
		return Summary{}, err
	}
	if err := plan.Ensure(); err != nil {
		return Summary{}, err
	}
	removeStaleTemps(d.File.Path)
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
		if t.Status == StatusDone && d.Runner == nil {
			results[u.ID].Branch = d.republish(ctx, plan, u.ID)
		}
	}

	type done struct {
		id  string
		res UnitResult
	}
	finished := make(chan done)
	// changed tells the loop that a running unit recorded progress
	// (retry_count, error_history) in the file, to be saved.
	changed := make(chan struct{}, 1)
	running := map[string]bool{}
	started := map[string]bool{} // units this run already took up: never twice
	var wg sync.WaitGroup
	defer wg.Wait()
	var runErr error
	// schedule blocks the units whose dependencies failed and marks the
	// ready ones in progress, in memory, and returns the units to start.
	schedule := func() ([]string, error) {
		step := Next(units, status)
		for _, b := range step.Blocked {
			status[b.ID] = StatusBlocked
			r := results[b.ID]
			r.Status, r.Reason = StatusBlocked, b.Reason
			if err := d.File.SetStatus(b.ID, StatusBlocked, b.Reason); err != nil {
				return nil, err
			}
			d.report(Event{Kind: EventBlocked, Unit: b.ID, Title: r.Title, Status: StatusBlocked, Reason: b.Reason})
		}
		var start []string
		for _, id := range step.Ready {
			if started[id] || len(running)+len(start) >= jobs || d.stopping() {
				continue
			}
			status[id] = StatusInProgress
			if err := d.File.SetStatus(id, StatusInProgress, ""); err != nil {
				return nil, err
			}
			start = append(start, id)
		}
		return start, nil
	}
	record := func(f done) {
		delete(running, f.id)
		status[f.id] = f.res.Status
		*results[f.id] = f.res
	}
	// Each round records what changed (units that finished, units blocked
	// or about to start) and saves the file once, before any new unit
	// starts. An error (the file cannot be written) ends the run: no new
	// unit starts, and the running ones are still waited for, since each of
	// them sends on finished.
	for {
		var start []string
		if ctx.Err() == nil && runErr == nil {
			start, runErr = schedule()
		}
		gen := d.File.Generation()
		if err := d.File.Save(); err != nil {
			if runErr == nil {
				runErr = err
			}
			start = nil
		}
		d.logNotes()
		if d.File.Generation() != gen {
			// The user edited the file: take in the tasks added or changed,
			// and look again for units that can start.
			units = d.refreshUnits(units, status, results, started)
			if len(start) == 0 && ctx.Err() == nil && runErr == nil {
				continue
			}
		}
		for _, id := range start {
			running[id], started[id] = true, true
			deps := depsOf(units, id) // the loop's view, taken before the unit's goroutine starts
			wg.Go(func() {
				var res UnitResult
				if d.Runner != nil {
					res = d.runElsewhere(ctx, plan, id, deps)
				} else {
					res = d.runUnit(ctx, plan, id, deps, changed)
				}
				finished <- done{id, res}
			})
		}
		if len(running) == 0 {
			break
		}
		select {
		case f := <-finished:
			record(f)
		case <-changed:
			continue // save the progress
		}
		for drained := false; !drained; {
			select {
			case f := <-finished:
				record(f)
			default:
				drained = true
			}
		}
	}
	if runErr == nil {
		runErr = ctx.Err()
	}
	if runErr == nil && d.stopping() {
		runErr = ErrStopped
	}
	return d.summary(units, results), runErr
}

func (d *Dispatcher) summary(units []Unit, results map[string]*UnitResult) Summary {
	var s Summary
	for _, u := range units {
		s.Units = append(s.Units, *results[u.ID])
	}
	return s
}

func (d *Dispatcher) report(e Event) {
	if d.Report != nil {
		d.Report(e)
	}
}

// runUnit takes one unit through the orchestrator graph and records the
// outcome in the file (not yet saved).
func (d *Dispatcher) runUnit(ctx context.Context, plan Plan, id string, deps []string, changed chan<- struct{}) UnitResult {
	t, _ := d.File.Task(id)
	start := time.Now()
	res := UnitResult{ID: id, Title: t.Title}
	var ws *workspace.Workspace
	finish := func(r Result, branch string) UnitResult {
		if ws != nil && branch != "" && r.Status != StatusInterrupted && !d.KeepWorkspaces {
			if _, err := ws.Remove(); err != nil && d.Log != nil {
				fmt.Fprintf(d.Log, "task %s: %v\n", id, err)
			}
		}
		res.Status, res.Reason, res.Branch = r.Status, r.Reason, branch
		res.Attempts, res.Elapsed = r.RetryCount, time.Since(start)
		if err := d.File.SetResult(id, r); errors.Is(err, ErrNoTask) {
			res.Reason = "removed from the tasks file during the run; result not written back"
		} else if err != nil {
			res.Status, res.Reason = StatusFailed, err.Error()
		}
		d.report(Event{Kind: EventFinish, Unit: id, Title: t.Title, Status: res.Status, Reason: res.Reason,
			Attempt: r.RetryCount, Elapsed: res.Elapsed, Tokens: res.Tokens, Branch: branch})
		return res
	}
	fail := func(state agents.TaskState, err error) UnitResult {
		if r, ok := infraResult(t, state, err); ok {
			return finish(r, "")
		}
		now := time.Now().UTC()
		hist := slices.Clone(state.ErrorHistory)
		hist = append(hist, fmt.Sprintf("Error: %v", err))
		return finish(Result{Status: StatusFailed, Reason: oneLine(err.Error()), RetryCount: state.RetryCount, ErrorHistory: hist, FailedAt: &now}, "")
	}
	d.report(Event{Kind: EventStart, Unit: id, Title: t.Title, MaxAttempts: t.Retries()})

	opts, err := d.workspaceOptions(plan, id, t, deps)
	if err != nil {
		return fail(agents.TaskState{}, fmt.Errorf("prepare workspace: %w", err))
	}
	ws, err = workspace.Prepare(ctx, opts)
	if err != nil {
		return fail(agents.TaskState{}, fmt.Errorf("prepare workspace: %w", err))
	}
	defer ws.Close()
	g, budget, err := d.graph(t, ws, plan)
	if err != nil {
		return fail(agents.TaskState{}, err)
	}
	in := agents.TaskState{
		Task: withConflicts(agents.Task{ID: id, Title: t.Title, Description: t.Description, Details: t.Details,
			TestStrategy: t.TestStrategy, OnExhausted: t.OnExhausted}, ws, opts),
		MaxRetries: t.Retries(),
	}
	// The budget is new in this process: give it the tokens the thread's
	// last checkpoint records, so that a resumed task's count (and its
	// budget_tokens limit) covers its earlier runs too.
	spent, err := restoreTokens(ctx, g, plan.Thread(id), budget)
	if err != nil {
		return fail(agents.TaskState{}, err)
	}
	in.Tokens = spent
	deadline := t.Timeout
	if deadline <= 0 {
		deadline = d.TaskTimeout
	}
	uctx, cancel := ctx, context.CancelFunc(func() {})
	if deadline > 0 {
		uctx, cancel = context.WithTimeoutCause(ctx, deadline, errDeadline)
	}
	state, err := d.invoke(uctx, g, plan.Thread(id), id, t, in, start, changed)
	cancel()
	res.Tokens = max(budget.Spent(), state.Tokens)
	branch, perr := publish(context.WithoutCancel(ctx), ws)
	switch {
	case err != nil && ctx.Err() == nil && errors.Is(context.Cause(uctx), errDeadline):
		now := time.Now().UTC()
		reason := fmt.Sprintf("deadline of %s passed (attempt %d): raise \"timeout\" in tasks.json or --task-timeout, or split the task", deadline, state.RetryCount+1)
		hist := append(slices.Clone(state.ErrorHistory), "Error: "+reason)
		return finish(Result{Status: StatusFailed, Reason: reason, RetryCount: state.RetryCount, ErrorHistory: hist, FailedAt: &now}, branch)
	case errors.Is(err, ErrStopped) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || (err != nil && ctx.Err() != nil):
		return finish(Result{Status: StatusInterrupted, Reason: "stopped; run statgraph resume to continue", RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory}, branch)
	case errors.Is(err, statgraph.ErrInterrupted):
		return finish(Result{Status: StatusInterrupted, Reason: "waiting for an answer (retry, skip or abort): run statgraph resume in a terminal", RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory}, branch)
	case err != nil:
		r := fail(state, err)
		r.Branch = branch
		return r
	}
	if perr != nil && (state.Phase == agents.PhaseDone || state.Phase == agents.PhaseSkipped) {
		return finish(Result{Status: StatusInterrupted, Reason: fmt.Sprintf("done, but its branch could not be published: %v; fix that and run statgraph resume", oneLine(perr.Error())),
			RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory}, "")
	}
	switch state.Phase {
	case agents.PhaseDone:
		return finish(Result{Status: StatusDone, Reason: warningsNote(state.Verification.Warnings), RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory}, branch)
	case agents.PhaseSkipped:
		return finish(Result{Status: StatusDone, Reason: "skipped by operator with checks failing", RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory}, branch)
	}
	if reason := unresolvedConflict(ws, opts, state); reason != "" {
		return finish(Result{Status: StatusBlocked, Reason: reason, RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory}, branch)
	}
	return finish(Result{Status: StatusFailed, Reason: fmt.Sprintf("failed after %d attempts", state.RetryCount),
		RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory, FailedAt: state.FailedAt}, branch)
}

// invoke runs (or continues) the unit's thread, reporting progress and
// answering escalations through Ask.
func (d *Dispatcher) invoke(ctx context.Context, g *statgraph.Graph[agents.TaskState], thread, id string, t Task, in agents.TaskState, start time.Time, changed chan<- struct{}) (agents.TaskState, error) {
	state := in
	recorded := -1 // the RetryCount last written to the file
	var resume any
	resuming := false
	if snap, err := g.State(ctx, thread); err == nil && len(snap.Interrupts) > 0 {
		state, resuming = snap.State, true
	}
	for {
		var err error
		var seq func(func(statgraph.Event[agents.TaskState], error) bool)
		if resuming {
			seq = g.StreamResume(ctx, thread, resume)
		} else {
			seq = g.Stream(ctx, in, statgraph.WithThread(thread))
		}
		for ev, e := range seq {
			if ev.Kind == statgraph.EventStepStart && d.stopping() {
				err = ErrStopped
				break
			}
			switch ev.Kind {
			case statgraph.EventNodeStart:
				// The phase shown is the node that runs now, not the one
				// that just finished.
				if phase, ok := nodePhases[ev.Node]; ok {
					attempt := state.RetryCount + 1
					if ev.Node == agents.NodePlanner {
						attempt = 0
					}
					d.report(Event{Kind: EventProgress, Unit: id, Title: t.Title, Phase: phase,
						Attempt: attempt, MaxAttempts: state.MaxRetries, Tokens: state.Tokens, Elapsed: time.Since(start)})
				}
			case statgraph.EventUpdate:
				state = ev.State
				if state.RetryCount != recorded {
					recorded = state.RetryCount
					d.recordProgress(id, state, changed)
				}
				d.report(Event{Kind: EventProgress, Unit: id, Title: t.Title, Phase: state.Phase,
					Attempt: state.RetryCount + boolInt(state.Phase == agents.PhaseExecuting), MaxAttempts: state.MaxRetries,
					Tokens: state.Tokens, Elapsed: time.Since(start)})
			case statgraph.EventRunEnd:
				if e == nil {
					state = ev.State
				}
				err = e
			}
		}
		var ie *statgraph.InterruptedError
		if !errors.As(err, &ie) || d.Ask == nil || len(ie.Interrupts) == 0 {
			return state, err
		}
		esc, perr := decodeEscalation(ie.Interrupts[0].Payload)
		if perr != nil {
			return state, err
		}
		answer, aerr := d.Ask(ctx, id, esc)
		if aerr != nil {
			return state, aerr
		}
		resume, resuming = answer, true
	}
}

// errDeadline is the cause of a unit's context when its deadline passes.
var errDeadline = errors.New("tasks: task deadline passed")

// ErrStopped is returned by Run when Stop was closed.
var ErrStopped = errors.New("tasks: run stopped")

// stopping reports whether Stop is closed.
func (d *Dispatcher) stopping() bool {
	if d.Stop == nil {
		return false
	}
	select {
	case <-d.Stop:
		return true
	default:
		return false
	}
}

// recordProgress writes a unit's retry_count and error_history to the file
// after a verification, and asks the dispatch loop to save it.
func (d *Dispatcher) recordProgress(id string, s agents.TaskState, changed chan<- struct{}) {
	if d.File.SetRetryCount(id, s.RetryCount) != nil || d.File.SetErrorHistory(id, s.ErrorHistory) != nil {
		return
	}
	select {
	case changed <- struct{}{}:
	default: // a save is already due
	}
}

// nodePhases names the phase a unit is in while a node of the orchestrator
// graph runs.
var nodePhases = map[string]string{
	agents.NodePlanner:  agents.PhasePlanning,
	agents.NodeExecutor: agents.PhaseExecuting,
	agents.NodeVerifier: agents.PhaseVerify,
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func decodeEscalation(payload []byte) (agents.Escalation, error) {
	var e agents.Escalation
	err := json.Unmarshal(payload, &e)
	return e, err
}

// oneLine returns the first line of s.
func oneLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}

// removeStaleTemps deletes temporary files a killed Save left next to the
// tasks file. The caller holds the file's lock, so no Save is running.
func removeStaleTemps(path string) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "."+base+".tmp-*"))
	for _, m := range matches {
		os.Remove(m)
	}
}

// warningsNote sums up the advisory failures of a task that is done anyway.
func warningsNote(w []string) string {
	switch len(w) {
	case 0:
		return ""
	case 1:
		return "done with a warning: " + oneLine(w[0])
	}
	return fmt.Sprintf("done with %d warnings, first: %s", len(w), oneLine(w[0]))
}
