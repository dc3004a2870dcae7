package control

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/gate"
	"github.com/statgraph/statgraph/tasks"
)

// Question is a pending escalation: a task with on_exhausted "ask" ran out
// of retries, or a task with approve_plan has a plan to approve (Kind
// gate.KindApproval, the plan in Proposal), and waits for Answer.
type Question struct {
	agents.Escalation
	Asked time.Time `json:"asked"`
}

type question struct {
	Question
	answer chan gate.Reply
}

// RunInfo says whether the in-process run is going on, and how the last
// one ended.
type RunInfo struct {
	Running bool      `json:"running"`
	Started time.Time `json:"started,omitzero"`
	Ended   time.Time `json:"ended,omitzero"`
	// Units is the last ended run's outcome per unit.
	Units []dispatch.UnitResult `json:"units,omitempty"`
	// Error is why the last run stopped early ("" when it ran to its end).
	Error string `json:"error,omitempty"`
	// Onto is the branch of a land (StartLand), "" for a run of the
	// pending tasks; Landing is the ended land's outcome.
	Onto    string            `json:"onto,omitempty"`
	Landing *dispatch.Landing `json:"landing,omitempty"`
}

type activeRun struct {
	started time.Time
	onto    string // the branch of a land, "" for a run
	cancel  context.CancelFunc
	done    chan struct{}
}

// StartOptions are a run's own choices.
type StartOptions struct {
	// RetryFailed sends failed and blocked tasks back to pending first,
	// as statgraph run --retry-failed does.
	RetryFailed bool
}

// Start begins a run of the plan's pending (and interrupted) tasks in this
// process and returns once it is going; the run goes on after ctx's
// caller returns, until it ends, Stop or Close. It makes the same checks
// as statgraph run before writing anything (repository, sandbox unless
// NoSandbox, state paths, the model and agent CLIs: dispatch.Preflight) and
// returns their error, with nothing changed. It takes the plan's lock for
// the length of the run and refuses with ErrRunning when this Control or
// another process (a statgraph run in a terminal) is running the plan.
// Escalations of tasks with on_exhausted "ask" become Questions (see
// Answer); progress goes to the subscribers (Subscribe).
func (c *Control) Start(ctx context.Context, so StartOptions) error {
	var sum dispatch.Summary
	return c.begin(ctx, "", func(ctx context.Context) (*Prepared, error) {
		return c.prepare(ctx, PrepareOptions{RetryFailed: so.RetryFailed})
	}, func(ctx context.Context, p *Prepared) (RunInfo, error) {
		var err error
		sum, err = p.Dispatcher.Run(ctx)
		return RunInfo{Units: sum.Units}, err
	}, func(p *Prepared, started time.Time, err error) {
		p.Notifier.End(sum, err, time.Since(started))
	})
}

// begin holds the run slot, prepares with prep and, once that succeeded,
// runs work in the background until it ends, Stop or Close; then the
// plan is released (Prepared.Close), after is called (when not nil) and
// the outcome becomes the last run's (Run). onto is the branch of a land,
// "" for a run. Only prep's error is returned.
func (c *Control) begin(ctx context.Context, onto string, prep func(context.Context) (*Prepared, error),
	work func(context.Context, *Prepared) (RunInfo, error), after func(*Prepared, time.Time, error)) error {
	c.mu.Lock()
	if c.run != nil {
		c.mu.Unlock()
		return fmt.Errorf("%w: started here at %s; stop it first", ErrRunning, c.run.started.Format(time.TimeOnly))
	}
	// Hold the slot while checking, so that two Starts cannot both pass.
	r := &activeRun{started: time.Now(), onto: onto, done: make(chan struct{})}
	c.run = r
	c.mu.Unlock()
	release := func() {
		c.mu.Lock()
		c.run = nil
		c.mu.Unlock()
		close(r.done)
	}
	p, err := prep(ctx)
	if err != nil {
		release()
		return err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel = cancel
	c.mu.Lock()
	c.live = map[string]liveState{}
	c.mu.Unlock()
	c.hub.publish(Event{Kind: EventRun, Run: &RunInfo{Running: true, Started: r.started, Onto: onto}})
	go func() {
		defer cancel()
		info, err := work(runCtx, p)
		p.Close()
		if after != nil {
			after(p, r.started, err)
		}
		info.Started, info.Ended, info.Onto = r.started, time.Now(), onto
		if err != nil {
			info.Error = err.Error()
		}
		c.mu.Lock()
		c.last = info
		c.live = map[string]liveState{}
		for u, q := range c.asks {
			close(q.answer)
			delete(c.asks, u)
		}
		c.run = nil
		c.mu.Unlock()
		close(r.done)
		c.hub.publish(Event{Kind: EventRun, Run: &info})
		c.hub.resyncAll()
	}()
	return nil
}

// prepare sets up a run or a land of the plan (Prepare with o's
// RetryFailed and OnWorkers), its Dispatcher reporting to this Control
// and its checkpoints in the store the Control reads.
func (c *Control) prepare(ctx context.Context, o PrepareOptions) (*Prepared, error) {
	p, err := Prepare(ctx, PrepareOptions{
		File: c.o.File, Tag: c.o.Tag, Plan: c.plan, Run: c.o.Run, RetryFailed: o.RetryFailed, OnWorkers: o.OnWorkers,
		Store: func(ctx context.Context) (statgraph.Checkpointer, error) {
			_, st, err := c.reader(ctx, true)
			return st, err
		},
	})
	if err != nil {
		return nil, err
	}
	p.Dispatcher.Report, p.Dispatcher.Ask = p.Notifier.Report(c.report), c.ask
	return p, nil
}

// Settle is the step before every run of f, here and in statgraph run:
// the last run's outcomes that are only in the plan's results journal (it
// was killed) go into f, and then, with retryFailed, the failed and
// blocked tasks go back to pending (as --retry-failed asks). It returns
// the ids sent back. The caller holds the plan's lock; f is changed in
// memory only (the run saves it). It fails when the journal cannot be
// read.
func Settle(f *tasks.File, plan dispatch.Plan, retryFailed bool) ([]string, error) {
	if err := tasks.SettleJournal(f, plan.Journal()); err != nil {
		return nil, err
	}
	if !retryFailed {
		return nil, nil
	}
	return f.ResetFailed(), nil
}

// report is the in-process run's Report hook: it keeps the unit's live
// state and tells the subscribers.
func (c *Control) report(e dispatch.Event) {
	c.mu.Lock()
	l := c.live[e.Unit]
	switch e.Kind {
	case dispatch.EventStart:
		l.status, l.reason, l.parkedUntil = tasks.StatusInProgress, "", nil
	case dispatch.EventFinish, dispatch.EventBlocked, dispatch.EventHeld:
		l.status, l.reason = e.Status, e.Reason
	case dispatch.EventParked:
		until := e.Until
		l.parkedUntil = &until
	}
	if e.Phase != "" {
		l.phase = e.Phase
	}
	if e.Attempt > 0 || e.Kind == dispatch.EventStart {
		l.attempt = e.Attempt
	}
	if e.MaxAttempts > 0 {
		l.max = e.MaxAttempts
	}
	if e.Tokens > 0 {
		l.tokens, l.usage = e.Tokens, e.Usage.OrTokens(e.Tokens)
	}
	c.live[e.Unit] = l
	c.mu.Unlock()
	c.hub.changed(e.Unit)
}

// ask is the in-process run's Ask hook: it registers the question and
// waits for Answer, or for the run to be stopped (then "abort" with the
// run's error).
func (c *Control) ask(ctx context.Context, unit string, e agents.Escalation) (gate.Reply, error) {
	q := &question{Question: Question{Escalation: e, Asked: time.Now()}, answer: make(chan gate.Reply, 1)}
	c.mu.Lock()
	c.asks[unit] = q
	c.mu.Unlock()
	c.hub.publish(Event{Kind: EventQuestion, Unit: unit, Question: &q.Question})
	c.hub.changed(unit)
	select {
	case r, ok := <-q.answer:
		if !ok {
			return gate.Reply{Answer: gate.AnswerAbort}, context.Canceled
		}
		return r, nil
	case <-ctx.Done():
		c.mu.Lock()
		if c.asks[unit] == q {
			delete(c.asks, unit)
		}
		c.mu.Unlock()
		return gate.Reply{Answer: gate.AnswerAbort}, ctx.Err()
	}
}

// Questions returns the pending escalations by unit: those of the
// in-process run and those of a run in another process (a terminal's
// statgraph run, see RemoteAsk).
func (c *Control) Questions() map[string]Question {
	out := map[string]Question{}
	for u, q := range remoteQuestions(c.plan) {
		out[u] = q.Question
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for u, q := range c.asks {
		out[u] = q.Question
	}
	return out
}

// Answer resolves the pending escalation of unit with "retry" (reset the
// attempts and go on), "skip" (mark it done with a warning) or "abort"
// (mark it failed): Reply with no text.
func (c *Control) Answer(unit string, answer gate.Answer) error {
	return c.Reply(unit, gate.Reply{Answer: answer})
}

// Reply resolves the pending question of unit, whether it comes from the
// in-process run or from a run in another process (RemoteAsk; the first
// answer wins): an escalation with "retry", "skip" or "abort" (see
// Answer), a plan to approve with "approve", "edit" (r.Text the edited
// plan, see agents.ParsePlan) or "reject" (r.Text the reason, which the
// task's status_reason records). It fails with ErrBadAnswer for an answer
// that does not fit the question (nothing is sent), or with ErrNoQuestion
// when the unit has no pending question (already answered, or the run
// ended).
func (c *Control) Reply(unit string, r gate.Reply) error {
	if !slices.Contains(gate.Choices(), string(r.Answer)) && !slices.Contains(gate.ApprovalChoices(), string(r.Answer)) {
		return fmt.Errorf("%w %q: want retry, skip or abort (a task out of attempts), approve, edit or reject (a plan)", ErrBadAnswer, r.Answer)
	}
	c.mu.Lock()
	q, ok := c.asks[unit]
	c.mu.Unlock()
	var kind string
	var remote remoteQuestion
	if ok {
		kind = q.Kind
	} else {
		var err error
		if remote, err = pendingQuestion(c.plan, unit); err != nil {
			return err
		}
		kind = remote.Question.Kind
	}
	if err := checkReply(unit, kind, r); err != nil {
		return err
	}
	if ok {
		c.mu.Lock()
		if c.asks[unit] != q {
			c.mu.Unlock()
			return fmt.Errorf("%w for task %s: another answer came first", ErrNoQuestion, unit)
		}
		delete(c.asks, unit)
		c.mu.Unlock()
		q.answer <- r
	} else if err := placeAnswer(c.plan, unit, remote, r); err != nil {
		return err
	}
	c.hub.publish(Event{Kind: EventAnswer, Unit: unit, Answer: r.Answer})
	c.hub.changed(unit)
	return nil
}

// checkReply vets r for unit's question of kind, an edited plan included,
// so that a bad answer is refused to whoever gives it rather than asked
// again.
func checkReply(unit, kind string, r gate.Reply) error {
	switch {
	case kind == gate.KindApproval && !slices.Contains(gate.ApprovalChoices(), string(r.Answer)):
		return fmt.Errorf("%w %q: task %s asks to approve its plan: want approve, edit (the edited plan as text) or reject (the reason as text)", ErrBadAnswer, r.Answer, unit)
	case kind != gate.KindApproval && !slices.Contains(gate.Choices(), string(r.Answer)):
		return fmt.Errorf("%w %q: task %s ran out of attempts: want retry, skip or abort", ErrBadAnswer, r.Answer, unit)
	case r.Answer == gate.AnswerEdit:
		if _, err := agents.ParsePlan(r.Text); err != nil {
			return fmt.Errorf("%w: edit of task %s's plan: %v", ErrBadAnswer, unit, err)
		}
	}
	return nil
}

// Stop stops the in-process run as the first Ctrl-C of statgraph run does:
// model calls and commands in flight are cancelled, running units are
// marked interrupted and the tasks file is saved; the next Start continues
// them. With wait set it returns once the run has ended. Stop without a
// run returns ErrNotRunning.
func (c *Control) Stop(wait bool) error {
	c.mu.Lock()
	r := c.run
	c.mu.Unlock()
	if r == nil || r.cancel == nil {
		return ErrNotRunning
	}
	r.cancel()
	if wait {
		<-r.done
	}
	return nil
}

// Run returns whether the in-process run is going on, or how the last one
// ended.
func (c *Control) Run() RunInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.run != nil {
		return RunInfo{Running: true, Started: c.run.started, Onto: c.run.onto}
	}
	return c.last
}

// Wait waits until no in-process run is going on, or ctx is done.
func (c *Control) Wait(ctx context.Context) error {
	c.mu.Lock()
	r := c.run
	c.mu.Unlock()
	if r == nil {
		return nil
	}
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Reset sends the failed or blocked tasks among ids back to pending (all
// of them when ids is empty, as --retry-failed does), under the plan's
// lock and after settling the results journal, as statgraph reset does,
// and returns the ids reset. It fails with ErrRunning while a run holds
// the lock, and with tasks.ErrNoTask or tasks.ErrNotResettable (nothing
// changed) for a bad id.
func (c *Control) Reset(ids ...string) ([]string, error) {
	var done []string
	err := c.locked(func(f *tasks.File) (bool, error) {
		if len(ids) == 0 {
			done = f.ResetFailed()
			return len(done) > 0, nil
		}
		var err error
		done, err = f.Reset(ids...)
		return err == nil, err
	})
	if err == nil {
		c.hub.resyncAll()
	}
	return done, err
}

// AddTask adds the task given as a JSON object (see tasks.AddTask) to the
// plan's tasks file, under its lock, and returns its id. It is the front
// doors' operation (the web API, MCP), so the object is first checked as a
// client's (tasks.CheckNew: size caps, no unknown field, an executor env
// within Run.AllowEnv). On any problem nothing is written and the error
// says what: a *tasks.ValidationError for file problems, one wrapping
// tasks.ErrTooLarge or tasks.ErrRefusedTask for CheckNew's; ErrRunning
// while a run holds the lock.
func (c *Control) AddTask(obj []byte) (string, error) {
	if err := tasks.CheckNew(obj, c.o.Run.AllowEnv); err != nil {
		return "", err
	}
	lock, err := lockPlan(c.o.File)
	if err != nil {
		return "", err
	}
	defer lock.Unlock()
	id, _, err := tasks.AddTask(c.o.File, c.o.Tag, obj, c.o.Run.AllowEnv)
	if err == nil {
		c.hub.resyncAll()
	}
	return id, err
}

// locked runs change on the tasks file under its lock, with the file
// loaded (after the lock, as Prepare does) and the journal settled first,
// and saves the file when change reports a change.
func (c *Control) locked(change func(f *tasks.File) (bool, error)) error {
	if _, err := os.Stat(c.o.File); err != nil {
		return fmt.Errorf("%s: %w", c.o.File, err)
	}
	lock, err := lockPlan(c.o.File)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	f, err := tasks.Load(c.o.File, c.o.Tag)
	if err != nil {
		return fmt.Errorf("%s: %w", c.o.File, err)
	}
	if err := tasks.SettleJournal(f, c.plan.Journal()); err != nil {
		return err
	}
	changed, err := change(f)
	if err != nil || !changed {
		return err
	}
	return f.Save()
}
