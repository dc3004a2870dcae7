package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/drain"
	"github.com/statgraph/statgraph/tasks"
)

// local is the Runner of a Dispatcher without one: it runs each unit in
// this process (runUnit). changed tells the dispatch loop that a unit
// recorded progress in the file.
type local struct {
	d       *Dispatcher
	changed chan<- struct{}
}

// RunUnit implements Runner: it takes unit id through the orchestrator
// graph here, reporting progress through the Dispatcher's Report. It
// never fails: what goes wrong is the unit's outcome.
func (l local) RunUnit(ctx context.Context, plan Plan, id string, deps []string, _ func(Event)) (Ran, error) {
	var rec tasks.Outcome
	var res UnitResult
	if t, _ := l.d.File.Task(id); l.d.candidates(t) > 1 {
		res = l.d.runBest(ctx, plan, id, deps, l.changed, &rec)
	} else {
		res, _ = l.d.runUnit(ctx, plan, slot{id: id}, deps, l.changed, &rec)
	}
	return Ran{Outcome: rec, Branch: res.Branch, Tokens: res.Tokens, Usage: res.Usage, Stop: res.stop}, nil
}

// candidates returns how many candidates unit t runs (see Attempts).
func (d *Dispatcher) candidates(t tasks.Task) int {
	if t.Attempts == nil && len(t.CandidateSettings) == 0 && d.Attempts > 1 {
		return d.Attempts
	}
	return t.Candidates()
}

// runUnit takes one unit, or one candidate of a best-of-N unit (s.k > 0),
// through the orchestrator graph and returns its outcome in *rec, with the
// branch and tokens in the UnitResult and its last state; runOn records a
// unit's outcome, runBest a candidate's.
func (d *Dispatcher) runUnit(ctx context.Context, plan Plan, s slot, deps []string, changed chan<- struct{}, rec *tasks.Outcome) (UnitResult, agents.TaskState) {
	id := s.id
	t, _ := d.File.Task(id)
	t = t.Candidate(max(s.k, 1)) // a unit of one candidate runs with its "candidates" entry
	start := time.Now()
	var last agents.TaskState
	res := UnitResult{ID: id, Title: t.Title}
	ctx, ut := d.startUnitSpan(ctx, id, t)
	defer func() { ut.end(res) }()
	var ws *workspace.Workspace
	finish := func(r tasks.Outcome, branch string) UnitResult {
		if ws != nil && branch != "" && r.Status != tasks.StatusInterrupted && r.Status != tasks.StatusParked && r.Status != tasks.StatusPending && !d.KeepWorkspaces {
			_, err := ws.Remove()
			if err == nil && tasks.IsDone(r.Status) && s.k == 0 {
				err = keepLayer(plan, id) // a best-of-N unit's winner keeps it: runBest
			}
			if err == nil {
				_, err = removeUnitState(plan, s.name())
			}
			if err != nil && d.Log != nil {
				fmt.Fprintf(d.Log, "task %s: %v\n", id, err)
			}
		}
		if branch != "" && s.k == 0 {
			landAt(pointPublished, id)
		}
		*rec = r
		res.Status, res.Reason, res.Branch = r.Status, r.Reason, branch
		res.Attempts, res.Elapsed = r.RetryCount, time.Since(start)
		return res
	}
	fail := func(state agents.TaskState, err error) UnitResult {
		if r, stop, ok := d.parkResult(t, state, err, time.Now()); ok {
			res.stop = stop
			return finish(r, "")
		}
		if r, ok := infraResult(t, state, err); ok {
			return finish(r, "")
		}
		if beaten(ctx) {
			return finish(beatenOutcome(ctx, state), "")
		}
		// Stopped before the graph ran (preparing the workspace or the
		// graph): the unit did not fail, it continues on the next run.
		if ctx.Err() != nil {
			return finish(tasks.Outcome{Status: tasks.StatusInterrupted, Reason: "stopped; run statgraph resume to continue", RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory}, "")
		}
		now := time.Now().UTC()
		hist := slices.Clone(state.ErrorHistory)
		hist = append(hist, fmt.Sprintf("Error: %v", err))
		return finish(tasks.Outcome{Status: tasks.StatusFailed, Reason: oneLine(err.Error()), RetryCount: state.RetryCount, ErrorHistory: hist, FailedAt: &now}, "")
	}
	opts, err := d.workspaceOptions(plan, s, t, deps)
	if err != nil {
		return fail(agents.TaskState{}, fmt.Errorf("prepare workspace: %w", err)), last
	}
	if opts.Start == "" {
		opts.Start = d.continueFrom(ctx, plan, id)
	}
	ws, err = workspace.Prepare(ctx, opts)
	if err != nil {
		return fail(agents.TaskState{}, fmt.Errorf("prepare workspace: %w", err)), last
	}
	defer ws.Close()
	g, budget, err := d.graph(t, ws, plan, s)
	if err != nil {
		return fail(agents.TaskState{}, err), last
	}
	in := agents.TaskState{
		Task: withConflicts(agents.Task{ID: id, Title: t.Title, Description: t.Description, Details: t.Details,
			TestStrategy: t.TestStrategy, OnExhausted: t.OnExhausted, ApprovePlan: t.ApprovePlan != nil && *t.ApprovePlan}, ws, opts),
		MaxRetries: t.Retries(),
	}
	if s.k > 0 { // candidates never escalate: the choice among them is the fallback
		in.Task.OnExhausted = ""
	}
	// The budget is new in this process: give it the tokens the thread's
	// last checkpoint records, so that a resumed task's count (and its
	// budget_tokens limit) covers its earlier runs too.
	spent, err := restoreTokens(ctx, g, s.thread(plan), budget)
	if err != nil {
		return fail(agents.TaskState{}, err), last
	}
	in.Tokens, in.Usage = spent.Tokens(), spent
	deadline := t.Timeout
	if deadline <= 0 {
		deadline = d.TaskTimeout
	}
	uctx, cancel := ctx, context.CancelFunc(func() {})
	if deadline > 0 {
		uctx, cancel = context.WithTimeoutCause(ctx, deadline, errDeadline)
	}
	var state agents.TaskState
	if ended, ok := endedThread(ctx, g, s, plan); ok {
		state = ended // a candidate that ended before a crash: publish it, run nothing
	} else {
		state, err = d.invoke(uctx, g, s.thread(plan), s, t, in, start, changed, ut)
	}
	cancel()
	last = state
	res.Usage = budget.Total()
	if res.Usage.Tokens() < state.Tokens {
		res.Usage = state.Spend()
	}
	res.Tokens = max(res.Usage.Tokens(), state.Tokens)
	branch, perr := publish(context.WithoutCancel(ctx), ws)
	switch {
	case beaten(ctx):
		return finish(beatenOutcome(ctx, state), branch), last
	case err != nil && ctx.Err() == nil && errors.Is(context.Cause(uctx), errDeadline):
		now := time.Now().UTC()
		reason := fmt.Sprintf("deadline of %s passed (attempt %d): raise \"timeout\" in tasks.json or --task-timeout, or split the task", deadline, state.RetryCount+1)
		hist := append(slices.Clone(state.ErrorHistory), "Error: "+reason)
		return finish(tasks.Outcome{Status: tasks.StatusFailed, Reason: reason, RetryCount: state.RetryCount, ErrorHistory: hist, FailedAt: &now}, branch), last
	case errors.Is(err, ErrStopped) || errors.Is(err, drain.ErrDrained) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || (err != nil && ctx.Err() != nil):
		return finish(tasks.Outcome{Status: tasks.StatusInterrupted, Reason: "stopped; run statgraph resume to continue", RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory}, branch), last
	case errors.Is(err, statgraph.ErrInterrupted) && state.Phase == agents.PhasePlanning:
		return finish(tasks.Outcome{Status: tasks.StatusInterrupted, Reason: "waiting for its plan to be approved (approve, edit or reject): run statgraph resume in a terminal, or answer through statgraph serve or mcp while statgraph run --wait-for-answers runs", RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory}, branch), last
	case isGlobalBudget(err):
		be, _ := llm.GlobalBudget(err)
		// The run's budget is spent (not the task's own): the task stops
		// before the call, its last step checkpointed, and is left pending
		// with its workspace, to continue in a run with budget left.
		return finish(tasks.Outcome{Status: tasks.StatusPending, Reason: fmt.Sprintf("stopped before its next model call or agent CLI, the run's budget is spent: %v; then run statgraph resume", be),
			RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory}, branch), last
	case errors.Is(err, statgraph.ErrInterrupted):
		return finish(tasks.Outcome{Status: tasks.StatusInterrupted, Reason: "waiting for an answer (retry, skip or abort): run statgraph resume in a terminal", RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory}, branch), last
	case err != nil:
		r := fail(state, err)
		r.Branch = branch
		return r, last
	}
	if perr != nil && (state.Phase == agents.PhaseDone || state.Phase == agents.PhaseSkipped) {
		return finish(tasks.Outcome{Status: tasks.StatusInterrupted, Reason: fmt.Sprintf("done, but its branch could not be published: %v; fix that and run statgraph resume", oneLine(perr.Error())),
			RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory}, ""), last
	}
	switch state.Phase {
	case agents.PhaseDone:
		return finish(tasks.Outcome{Status: tasks.StatusDone, Reason: warningsNote(state.Verification.Warnings), RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory}, branch), last
	case agents.PhaseSkipped:
		return finish(tasks.Outcome{Status: tasks.StatusDone, Reason: "skipped by operator with checks failing", RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory}, branch), last
	case agents.PhaseCancelled:
		return finish(tasks.Outcome{Status: tasks.StatusCancelled, Reason: state.Cancelled, RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory}, branch), last
	}
	if reason := unresolvedConflict(ws, opts, state); reason != "" {
		return finish(tasks.Outcome{Status: tasks.StatusBlocked, Reason: reason, RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory}, branch), last
	}
	return finish(tasks.Outcome{Status: tasks.StatusFailed, Reason: fmt.Sprintf("failed after %d attempts", state.RetryCount),
		RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory, FailedAt: state.FailedAt}, branch), last
}

// invoke runs (or continues) the unit's thread, reporting progress and
// answering escalations through Ask. With changed nil (a landing, whose
// attempts are not the unit's run) nothing is recorded in the file.
func (d *Dispatcher) invoke(ctx context.Context, g *statgraph.Graph[agents.TaskState], thread string, s slot, t tasks.Task, in agents.TaskState, start time.Time, changed chan<- struct{}, ut *unitTrace) (agents.TaskState, error) {
	id := s.id
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
		var res statgraph.Result[agents.TaskState] // its Interrupts say what a pause asks
		hook := append(ut.nodeHook(thread), statgraph.WithResult(&res))
		if resuming {
			seq = g.Stream(ctx, agents.TaskState{}, append(hook, statgraph.WithThread(thread), statgraph.WithResume(resume))...)
		} else {
			seq = g.Stream(ctx, in, append(hook, statgraph.WithThread(thread))...)
		}
		for ev, e := range seq {
			ut.event(ev, state)
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
					d.report(Event{Kind: EventProgress, Unit: id, Candidate: s.k, Title: t.Title, Phase: phase,
						Attempt: attempt, MaxAttempts: state.MaxRetries, Tokens: state.Tokens, Usage: state.Usage, Elapsed: time.Since(start)})
				}
			case statgraph.EventUpdate:
				state = ev.State
				if state.RetryCount != recorded && changed != nil && s.k == 0 { // a candidate's count is not the task's
					recorded = state.RetryCount
					d.recordProgress(id, state, changed)
				}
				d.report(Event{Kind: EventProgress, Unit: id, Candidate: s.k, Title: t.Title, Phase: state.Phase,
					Attempt: state.RetryCount + boolInt(state.Phase == agents.PhaseExecuting), MaxAttempts: state.MaxRetries,
					Tokens: state.Tokens, Usage: state.Usage, Elapsed: time.Since(start)})
			case statgraph.EventRunEnd:
				if e == nil {
					state = ev.State
				}
				err = e
			}
		}
		if !errors.Is(err, statgraph.ErrInterrupted) || len(res.Interrupts) == 0 {
			return state, err
		}
		esc, perr := decodeEscalation(res.Interrupts[0].Payload)
		if perr != nil {
			return state, err
		}
		d.report(Event{Kind: EventQuestion, Unit: id, Title: t.Title, Attempt: esc.Attempts, MaxAttempts: state.MaxRetries,
			Reason: questionReason(esc), Elapsed: time.Since(start)})
		if d.Ask == nil {
			return state, err
		}
		reply, aerr := d.Ask(ctx, id, esc)
		if aerr != nil {
			return state, aerr
		}
		resume, resuming = reply, true
	}
}

// questionReason sums up an escalation for EventQuestion: the attempts
// and the last error.
func questionReason(e agents.Escalation) string {
	r := fmt.Sprintf("failed %d attempts; retry, skip or abort?", e.Attempts)
	if n := len(e.Errors); n > 0 {
		r += " Last error: " + oneLine(e.Errors[n-1])
	}
	return r
}

// errDeadline is the cause of a unit's context when its deadline passes.
var errDeadline = errors.New("dispatch: task deadline passed")

// recordProgress writes a running unit's outcome so far (in progress, its
// retry_count and error_history) to the file after a verification, and
// asks the dispatch loop to save it. failed_at stays as it was until the
// unit ends.
func (d *Dispatcher) recordProgress(id string, s agents.TaskState, changed chan<- struct{}) {
	t, ok := d.File.Task(id)
	if !ok || d.File.Apply(id, tasks.Outcome{Status: tasks.StatusInProgress, RetryCount: s.RetryCount, ErrorHistory: s.ErrorHistory, FailedAt: t.FailedAt}) != nil {
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
