package queue

// This file is the worker's side: a River worker that runs unit jobs.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/drain"
	"github.com/statgraph/statgraph/tasks"
)

// DefaultLease is how long a worker may hold a unit when --lease is not
// given: River's job timeout. A unit still running then is cancelled (and
// continues from its checkpoint on a later attempt); a worker that died is
// noticed by River's rescuer after the lease plus RescueGrace.
const DefaultLease = time.Hour

// RescueGrace is added to the lease to make River's RescueStuckJobsAfter
// (which must exceed the job timeout). River's rescuer runs every 30 s, so
// a dead worker's unit is taken up between lease+grace and lease+grace+30s.
const RescueGrace = 5 * time.Second

// Worker runs unit jobs: it clones the job's remote into a bare mirror
// under Root, runs the unit through dispatch.Dispatcher.RunOne (the local
// run's workspaces, sandbox, stacked bases and infrastructure errors), and
// pushes its branch and records its result fenced by a fresh token (see
// the package doc). Set the fields, then Start.
type Worker struct {
	Pool *pgxpool.Pool
	// ID names this worker in statgraph_units and in logs.
	ID uuid.UUID
	// Root is the worker's state directory: mirrors of remotes; the plans'
	// workspaces live under the state root as for a local run.
	Root string
	// Checkpointer stores the units' checkpoints; shared by every worker
	// (Postgres) so that a rescued unit continues where it stopped. A
	// unit's thread there is scoped by its job's remote (see Scoped).
	Checkpointer statgraph.Checkpointer
	// AllowEnv names the environment variables of this worker passed to
	// agent CLIs besides those their preset declares (its --allow-env: NAME,
	// or PREFIX* for every variable starting with PREFIX). A unit whose
	// executor "env" names anything else (tasks.EnvAllowed), "*" included,
	// is refused: it ends failed with a reason naming the entries, without
	// running (see refuseEnv).
	AllowEnv []string
	// Prepare makes the Dispatcher that runs a unit, with this worker's
	// settings (model, sandbox, GoCacheProg, Log): control.PrepareWorker's
	// checks the unit's plan as control.Prepare checks a run's and makes
	// the Dispatcher as a run's is made. nil makes one with the defaults.
	// The worker then sets the Dispatcher's AllowEnv (the Worker's), the
	// unit's Limits, where its workspace starts and the reports that push
	// its work in progress.
	Prepare func(ctx context.Context, u UnitSetup) (*dispatch.Dispatcher, error)
	// Log receives one line per unit taken, finished or refused; nil
	// discards them.
	Log io.Writer
	// LastAttempt reads a unit's checkpointed run: whether it is
	// unfinished, and the commit of its last executor attempt ("" for
	// none). thread is the thread's name in Checkpointer (ScopedThread). With it, a worker taking over a unit whose workspace is on
	// another machine starts the workspace from that commit (pushed to the
	// remote as statgraph-wip/<plan>/<unit> after every step), so the run
	// continues from its checkpoint; when the remote does not have the
	// commit, the unit's checkpoints are deleted and it starts over. Nil
	// continues from the checkpoint with a workspace from the dependencies.
	LastAttempt func(ctx context.Context, thread string) (commit string, unfinished bool, err error)

	mirrors mirrors
	files   fileCache
	lease   time.Duration
	beat    heartbeat
}

// UnitSetup is what a worker has of a unit when it makes the unit's
// Dispatcher (Worker.Prepare): the tasks file its job names, the plan in
// the worker's mirror of the remote (Plan.Repo), and the unit's view of
// the worker's Checkpointer (see Scoped).
type UnitSetup struct {
	File         *tasks.File
	Plan         dispatch.Plan
	Checkpointer statgraph.Checkpointer
}

// prepare makes the Dispatcher that runs the unit u (see Prepare).
func (w *Worker) prepare(ctx context.Context, u UnitSetup) (*dispatch.Dispatcher, error) {
	if w.Prepare != nil {
		return w.Prepare(ctx, u)
	}
	return &dispatch.Dispatcher{File: u.File, Repo: u.Plan.Repo, Checkpointer: u.Checkpointer, Log: w.Log}, nil
}

type unitWorker struct {
	river.WorkerDefaults[UnitArgs]
	w *Worker
}

func (u *unitWorker) Work(ctx context.Context, job *river.Job[UnitArgs]) error {
	return u.w.work(ctx, job.Args, job.Attempt)
}

// Start starts taking jobs, concurrency units at a time, each for at most
// lease (DefaultLease when 0). Stop the returned client to stop: Stop lets
// running units finish; StopAndCancel interrupts them at once (they
// continue from their checkpoint on another attempt). To drain, give ctx
// a drain switch (drain.WithRequest), flip it, then Stop: each running
// unit finishes its current step, checkpoints it and is released.
func (w *Worker) Start(ctx context.Context, concurrency int, lease time.Duration) (*river.Client[pgx.Tx], error) {
	if w.Checkpointer == nil {
		return nil, errors.New("queue: the worker needs a Checkpointer")
	}
	if concurrency <= 0 {
		concurrency = 1
	}
	if lease <= 0 {
		lease = DefaultLease
	}
	w.mirrors.root, w.lease = w.Root, lease
	w.beat.nudge = make(chan struct{}, 1)
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &unitWorker{w: w}); err != nil {
		return nil, err
	}
	c, err := river.NewClient(riverpgxv5.New(w.Pool), &river.Config{
		ID:                   "statgraph-worker-" + w.ID.String(),
		Queues:               map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: concurrency}},
		Workers:              workers,
		JobTimeout:           lease,
		RescueStuckJobsAfter: lease + RescueGrace,
		FetchPollInterval:    200 * time.Millisecond,
		FetchCooldown:        50 * time.Millisecond,
	})
	if err != nil {
		return nil, fmt.Errorf("queue: River client: %w", err)
	}
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("queue: start River client: %w", err)
	}
	return c, nil
}

func (w *Worker) logf(format string, args ...any) {
	if w.Log != nil {
		fmt.Fprintf(w.Log, "worker %s: "+format+"\n", append([]any{w.ID.String()[:8]}, args...)...)
	}
}

// work runs one attempt of a unit job. An error makes River retry the job
// later (the unit continues from its checkpoint); river.JobCancel ends it.
//
// A worker draining (a drain requested on the ctx given to Start, see
// package statgraph/drain) puts a job it fetches back untouched, and a
// unit whose run drained (its step finished and checkpointed) back too,
// with river.JobSnooze(0): available at once to another worker, without
// counting as a failed attempt.
func (w *Worker) work(ctx context.Context, a UnitArgs, attempt int) error {
	if drain.Requested(ctx) {
		return river.JobSnooze(0)
	}
	token := uuid.New()
	err := w.attempt(ctx, a, attempt, token)
	if err != nil && !holds(context.WithoutCancel(ctx), w.Pool, a, token) {
		// This attempt lost the unit (it stalled past its lease and River
		// gave the job to another worker, which holds it now): whatever it
		// did is refused. Returning the error would make River set the
		// job, which the other attempt is running, retryable again.
		w.logf("unit %s (%s): %v (after: %v)", a.Unit, a.Key, refuse(context.WithoutCancel(ctx), w.Pool, a, token, w.ID), err)
		return nil
	}
	return err
}

// attempt is one attempt of a unit job under token.
func (w *Worker) attempt(ctx context.Context, a UnitArgs, attempt int, token uuid.UUID) error {
	staged, done, err := claim(ctx, w.Pool, a, token, w.ID, w.lease)
	if err != nil {
		return err
	}
	if done {
		w.logf("unit %s (%s): result already recorded", a.Unit, a.Key)
		return nil
	}
	w.logf("unit %s (%s): taken, attempt %d; limits: %s", a.Unit, a.Key, attempt, a.Limits)
	defer w.beat.hold(a)()
	m, err := w.mirrors.get(ctx, a.Remote)
	if err != nil {
		return err
	}
	if staged != nil {
		if ok, err := w.finishStaged(ctx, m, a, token, *staged); ok || err != nil {
			return err
		}
	}
	if a.TasksHash == "" {
		// Enqueued by a statgraph that put the file in the job: the
		// coordinator enqueues the unit again when the job ends.
		return river.JobCancel(fmt.Errorf("queue: unit %s's job names no tasks file (enqueued by an older statgraph); the coordinator enqueues it again", a.Unit))
	}
	data, err := w.files.load(ctx, w.Pool, a.TasksHash)
	if errors.Is(err, errNoFile) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	f, err := tasks.Parse(filepath.Join(m.dir, filepath.FromSlash(a.File)), data, a.Tag)
	if err != nil {
		return river.JobCancel(fmt.Errorf("queue: the tasks file in unit %s's job does not load: %w", a.Unit, err))
	}
	var deps []string
	for _, u := range f.Units() {
		if u.ID != a.Unit {
			continue
		}
		if bad := tasks.EnvOutside(u.Task.Executor.Env, w.AllowEnv); len(bad) > 0 {
			return w.refuseEnv(ctx, a, token, *u.Task, bad)
		}
		for _, d := range u.Deps {
			deps = append(deps, "statgraph/"+a.Key+"/"+d)
		}
	}
	plan, err := dispatch.NewPlan(m.dir, f.Path, a.Tag)
	if err != nil {
		return err
	}
	wip := WIPBranch(a.Key, a.Unit)
	wsDir := filepath.Join(plan.WorkDir(), a.Unit)
	_, err = os.Stat(filepath.Join(wsDir, ".git"))
	fresh := err != nil // the workspace is made for this attempt
	store := Scoped(w.Checkpointer, a.Remote)
	startFrom, err := w.takeOver(ctx, m, store, plan, a, wip)
	if err != nil {
		return err
	}
	if startFrom != "" {
		deps = append(deps, startFrom)
	}
	if len(deps) > 0 || a.Base == "" || !m.at(ctx, a.Base) {
		if err := m.fetch(ctx, deps); err != nil {
			return err
		}
	}
	d, err := w.prepare(ctx, UnitSetup{File: f, Plan: plan, Checkpointer: store})
	if err != nil {
		return err
	}
	d.AllowEnv = w.AllowEnv
	a.Limits.apply(d, w.Pool)
	d.StartFrom = func(string) string { return startFrom }
	// Push the workspace's commit to the remote after every step that
	// made one, before the step's checkpoint is written (the dispatcher
	// reports a step's update before the graph saves it), so that a worker
	// taking over finds the commit the checkpoint names. The commit the
	// workspace starts from (seen at the unit's first event, before any
	// step ran) is not pushed when the workspace is new: a checkpoint
	// names only commits of attempts, and a worker taking over builds the
	// start from the dependencies (or the work in progress it found,
	// already on the remote). HEAD is read from the workspace's files, not
	// by a git process per event.
	pushed, wipPushed := "", false
	report := d.Report
	d.Report = func(e dispatch.Event) {
		if report != nil {
			report(e)
		}
		if e.Kind != dispatch.EventProgress || w.LastAttempt == nil {
			return
		}
		head, err := refCommit(ctx, wsDir, "HEAD")
		if err != nil || head == pushed {
			return
		}
		if pushed == "" && fresh {
			pushed = head // the start
			return
		}
		if err := pushRemote(ctx, wsDir, a.Remote, workspace.RefUpdate{Name: "refs/heads/" + wip, New: head}); err != nil {
			w.logf("unit %s (%s): push its work in progress: %v", a.Unit, a.Key, err)
			return
		}
		pushed, wipPushed = head, true
	}
	ur, r, took, err := w.takeUp(ctx, m, d, a, wip)
	if err == nil && !took {
		ur, r, err = d.RunOne(ctx, a.Unit)
	}
	if err != nil {
		return err
	}
	if r.Status == tasks.StatusInterrupted && ctx.Err() == nil && drain.Requested(ctx) {
		w.logf("unit %s (%s): drained: its current step finished and is checkpointed; released, it continues on the next worker to take it", a.Unit, a.Key)
		return river.JobSnooze(0)
	}
	if ctx.Err() != nil {
		// Cancelled (lease over, or the worker stops): no result; River
		// retries and the unit continues from its last checkpoint.
		w.logf("unit %s (%s): stopped (%v); it continues from its checkpoint", a.Unit, a.Key, context.Cause(ctx))
		return fmt.Errorf("unit %s stopped: %w", a.Unit, context.Cause(ctx))
	}
	res := result{Status: r.Status, Reason: r.Reason, RetryCount: r.RetryCount, ErrorHistory: r.ErrorHistory,
		FailedAt: r.FailedAt, ParkedUntil: r.ParkedUntil, Branch: ur.Branch, Worker: w.ID.String(), Tokens: ur.Tokens}
	var push func() error
	if ur.Branch != "" {
		if res.Commit, err = m.commit(ctx, ur.Branch); err != nil {
			return fmt.Errorf("unit %s: its published branch %s: %w", a.Unit, ur.Branch, err)
		}
		// The staged commit goes to the remote (as work in progress) before
		// it is staged, so that a worker taking over a cut-off publication
		// finds it there instead of running the unit again; a step of this
		// attempt pushed it there already when it is the workspace's last
		// commit (the usual case).
		if !wipPushed || res.Commit != pushed {
			if err := m.push(ctx, res.Commit, wip); err != nil {
				return fmt.Errorf("unit %s: %w", a.Unit, err)
			}
		}
		if err := stage(ctx, w.Pool, a, token, res); errors.Is(err, ErrFenced) {
			w.logf("unit %s (%s): %v", a.Unit, a.Key, err)
			return nil
		} else if err != nil {
			return err
		}
		// One push sets the branch and deletes the work in progress, which
		// is no longer needed once the branch is there (atomically: never
		// before).
		push = func() error { return m.publish(ctx, res.Commit, ur.Branch, wip) }
	}
	err = publish(ctx, w.Pool, a, token, w.ID, res, w.lease, push)
	if errors.Is(err, ErrFenced) {
		// Another attempt holds the unit (River rescued the job while this
		// one stalled): that attempt publishes. Returning an error would
		// make River set the job, which that attempt is running, retryable
		// again and start a third; nil leaves it alone.
		w.logf("unit %s (%s): %v", a.Unit, a.Key, err)
		return nil
	}
	if err != nil {
		return err
	}
	w.logf("unit %s (%s): %s", a.Unit, a.Key, r.Status)
	return nil
}

// refuseEnv records unit a failed, without running it, because its
// executor's env names the entries bad, which this worker does not allow.
//
// Refused rather than run with those entries left out: the tasks file in
// the queue may not be the user's own (a check that reached the queue's
// Postgres can enqueue a file asking for "*"), and an agent run with less
// than its task asks for fails for a reason nobody can see (a missing key
// looks like a broken agent) or, worse, does other work than planned and
// publishes it. A refusal runs nothing and its reason, written into the
// coordinator's tasks.json as the task's status_reason, says which entries
// and what to do.
func (w *Worker) refuseEnv(ctx context.Context, a UnitArgs, token uuid.UUID, t tasks.Task, bad []string) error {
	allowed := "none (it was started without --allow-env)"
	if len(w.AllowEnv) > 0 {
		allowed = strings.Join(w.AllowEnv, ",")
	}
	now := time.Now().UTC()
	r := result{Status: tasks.StatusFailed, RetryCount: t.RetryCount, ErrorHistory: t.ErrorHistory, FailedAt: &now, Worker: w.ID.String(),
		Reason: fmt.Sprintf("refused by worker %s: the executor's env names %s, which this worker does not pass to agent CLIs (its --allow-env: %s); "+
			"start the workers with --allow-env naming what the task needs, or remove it from the task's env, then statgraph reset %s",
			w.ID.String()[:8], strings.Join(bad, ", "), allowed, a.Unit)}
	err := publish(ctx, w.Pool, a, token, w.ID, r, w.lease, nil)
	if errors.Is(err, ErrFenced) {
		w.logf("unit %s (%s): %v", a.Unit, a.Key, err)
		return nil
	}
	if err != nil {
		return err
	}
	w.logf("unit %s (%s): %s", a.Unit, a.Key, r.Reason)
	return nil
}

// takeOver returns the branch the unit's workspace starts from when this
// worker takes over a run another machine began: wip, when the remote has
// the commit of the run's last attempt there, or the unit's published
// branch when that is the commit (a done unit sent back for review). When it does not (the other
// worker died before pushing it), the unit's checkpoints are deleted, so
// that it starts over rather than continue on a workspace without that
// attempt. "" when there is nothing to take over. store is the plan's
// view of the Checkpointer (see Scoped).
func (w *Worker) takeOver(ctx context.Context, m *mirror, store statgraph.Checkpointer, plan dispatch.Plan, a UnitArgs, wip string) (string, error) {
	unit := a.Unit
	if w.LastAttempt == nil {
		return "", nil
	}
	if _, err := os.Stat(filepath.Join(plan.WorkDir(), unit, ".git")); err == nil {
		return "", nil // the workspace is here: the run continues in it
	}
	commit, unfinished, err := w.LastAttempt(ctx, ScopedThread(a.Remote, plan.Thread(unit)))
	if err != nil || !unfinished || commit == "" {
		return "", err
	}
	got, err := m.remoteCommit(ctx, wip)
	if err != nil {
		return "", err
	}
	if got == commit {
		w.logf("unit %s: continues from its checkpoint on the commit %s of its last attempt", unit, commit[:min(12, len(commit))])
		return wip, nil
	}
	// A done unit sent back with review comments (statgraph review,
	// queue.SendBack) has an unfinished thread again, and its last
	// attempt is its published branch.
	published := plan.Branch(unit)
	if got, err = m.remoteCommit(ctx, published); err != nil {
		return "", err
	}
	if got == commit {
		w.logf("unit %s: sent back; continues from its published branch at %s", unit, commit[:min(12, len(commit))])
		return published, nil
	}
	w.logf("unit %s: its last attempt's commit %s is not on the remote; the unit starts over", unit, commit[:min(12, len(commit))])
	_, err = store.Delete(ctx, plan.Thread(unit), 0)
	return "", err
}

// finishStaged finishes the publication an earlier attempt staged and
// did not record (its worker died in the middle): when the remote already
// has the staged commit, or this worker's mirror has it to push, the
// staged result is recorded without running the unit again. ok is false
// when neither holds, and the unit must run.
func (w *Worker) finishStaged(ctx context.Context, m *mirror, a UnitArgs, token uuid.UUID, r result) (ok bool, err error) {
	if r.Branch == "" || r.Commit == "" {
		return false, nil
	}
	var push func() error
	if got, err := m.remoteCommit(ctx, r.Branch); err != nil {
		return false, err
	} else if got != r.Commit {
		if !m.has(ctx, r.Commit) {
			// The attempt that staged it pushed it as work in progress.
			if err := m.fetch(ctx, []string{WIPBranch(a.Key, a.Unit)}); err != nil {
				return false, err
			}
		}
		if !m.has(ctx, r.Commit) {
			w.logf("unit %s (%s): an earlier attempt staged its result but its commit is neither on the remote nor here; the unit runs again", a.Unit, a.Key)
			return false, nil
		}
		push = func() error { return m.push(ctx, r.Commit, r.Branch) }
	}
	r.Worker = w.ID.String()
	err = publish(ctx, w.Pool, a, token, w.ID, r, w.lease, push)
	if errors.Is(err, ErrFenced) {
		w.logf("unit %s (%s): %v", a.Unit, a.Key, err)
		return true, nil
	}
	if err != nil {
		return false, err
	}
	// The branch is on the remote now: the work in progress the earlier
	// attempt pushed is not needed any more.
	if err := m.deleteBranch(ctx, WIPBranch(a.Key, a.Unit)); err != nil {
		w.logf("unit %s (%s): delete its work-in-progress branch: %v", a.Unit, a.Key, err)
	}
	w.logf("unit %s (%s): %s (published what an earlier attempt staged)", a.Unit, a.Key, r.Status)
	return true, nil
}
