package queue

// This file is the coordinator's side: a dispatch.Runner that enqueues a
// ready unit as a River job and waits for its recorded result.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/tasks"
)

// Runner enqueues units for workers (statgraph worker) and waits for their
// results; set it as dispatch.Dispatcher.Runner. It is safe for concurrent use.
//
// A unit is enqueued once per generation: the row (plan, unit, generation)
// in statgraph_units is inserted in the same transaction as the job, so a
// coordinator killed and started again finds the row and waits for the job
// it already enqueued instead of enqueuing it twice. A unit whose newest
// generation has a result that is not done (failed, interrupted, blocked)
// and that the dispatcher runs again (resume, or reset) gets a new
// generation; a done result is taken as it is.
type Runner struct {
	Pool *pgxpool.Pool
	// Remote is the git remote the workers clone from and push to.
	Remote string
	// TasksFile is the path of the tasks file on this machine; each saved
	// version is stored once in statgraph_files, and a job names it.
	TasksFile string
	// Poll is how often the rows of the waiting units are read (one query
	// for all of them); 0 means 200ms. Set it before the first RunUnit.
	Poll time.Duration
	// Limits are the run's limits every unit job carries (see Limits);
	// set them before the first RunUnit.
	Limits Limits

	client *river.Client[pgx.Tx]
	files  storedFiles
	waiters
	baseOnce sync.Once
	base     string // see UnitArgs.Base
}

// remoteBase returns the commit of the remote's default branch, read once
// per Runner; "" when it cannot be read (workers then fetch it).
func (r *Runner) remoteBase(ctx context.Context) string {
	r.baseOnce.Do(func() {
		out, err := git(ctx, "", "ls-remote", r.Remote, "HEAD")
		if f := strings.Fields(out); err == nil && len(f) == 2 && isHash(f[0]) {
			r.base = f[0]
		}
	})
	return r.base
}

// NewRunner returns a Runner inserting jobs through pool.
func NewRunner(pool *pgxpool.Pool, remote, tasksFile string) (*Runner, error) {
	c, err := river.NewClient(riverpgxv5.New(pool), &river.Config{})
	if err != nil {
		return nil, fmt.Errorf("queue: River client: %w", err)
	}
	return &Runner{Pool: pool, Remote: remote, TasksFile: tasksFile, client: c}, nil
}

// PlanID is the plan's identity in the queue: the remote and the plan's
// key, so that two repositories whose tasks files have the same path never
// share a row.
func PlanID(remote string, plan dispatch.Plan) string { return remote + "#" + plan.Key }

// RunUnit implements dispatch.Runner.
func (r *Runner) RunUnit(ctx context.Context, plan dispatch.Plan, id string, deps []string, report func(dispatch.Event)) (dispatch.Ran, error) {
	pid := PlanID(r.Remote, plan)
	gen, res, err := latest(ctx, r.Pool, pid, id)
	if err != nil {
		return dispatch.Ran{}, err
	}
	switch {
	case res != nil && tasks.IsDone(res.Status):
		return dispatch.Ran{Outcome: res.taskResult(), Branch: res.Branch}, nil
	case gen == 0 || res != nil:
		gen++
		if err := r.enqueue(ctx, plan, pid, id, gen); err != nil {
			return dispatch.Ran{}, err
		}
	default: // enqueued by an earlier coordinator: it runs under this run's limits
		if err := r.adopt(ctx, pid, id, gen); err != nil {
			return dispatch.Ran{}, err
		}
	}
	for {
		res, err := r.wait(ctx, pid, id, gen)
		if !errors.Is(err, errJobEnded) {
			return dispatch.Ran{Outcome: res.taskResult(), Branch: res.Branch, Tokens: res.Tokens}, err
		}
		// The job ended with no result (its attempts ran out, or a worker
		// that lost the unit completed it while another, since dead, held
		// it) and the last holder's lease is over: run the unit again as a
		// new generation. A late result of the old one is refused then
		// (publish checks for a newer generation).
		if gen, err = r.enqueueAfter(ctx, plan, pid, id, gen); err != nil {
			return dispatch.Ran{}, err
		}
	}
}

// errJobEnded is wait's error when the unit's River job is finalized with
// no result recorded.
var errJobEnded = errors.New("queue: the unit's job ended without a result")

// jobEndedSQL is true for a unit's row u whose River job j (LEFT JOINed
// on u.job_id) is finalized (completed, cancelled or discarded) or gone,
// and whose last holder's lease is over: no worker will record a result.
const jobEndedSQL = `(j.state IS NULL OR j.state::text IN ('completed', 'cancelled', 'discarded'))
	AND (u.lease_until IS NULL OR u.lease_until < now())`

// enqueueAfter enqueues generation gen+1 of the unit unless generation
// gen has a result by now, and returns the generation to wait for. It
// holds gen's row locked meanwhile, so a worker publishing gen either
// finishes first (its result is taken) or finds gen+1 and is refused.
func (r *Runner) enqueueAfter(ctx context.Context, plan dispatch.Plan, pid, id string, gen int) (int, error) {
	hash, err := r.storeFile(ctx, plan, id)
	if err != nil {
		return gen, err
	}
	tx, err := r.Pool.Begin(ctx)
	if err != nil {
		return gen, fmt.Errorf("queue: enqueue unit %s again: %w", id, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var recorded bool
	if err := tx.QueryRow(ctx, `SELECT result IS NOT NULL FROM statgraph_units WHERE plan = $1 AND unit = $2 AND generation = $3 FOR UPDATE`,
		pid, id, gen).Scan(&recorded); err != nil {
		return gen, fmt.Errorf("queue: enqueue unit %s again: %w", id, err)
	}
	if recorded {
		return gen, nil
	}
	if err := r.enqueueTx(ctx, tx, plan, pid, id, gen+1, hash); err != nil {
		return gen, err
	}
	return gen + 1, tx.Commit(ctx)
}

// enqueue inserts the unit's row and its job in one transaction; a row
// that is already there (another coordinator got there first) inserts
// nothing.
func (r *Runner) enqueue(ctx context.Context, plan dispatch.Plan, pid, id string, gen int) error {
	hash, err := r.storeFile(ctx, plan, id)
	if err != nil {
		return err
	}
	tx, err := r.Pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("queue: enqueue unit %s: %w", id, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := r.enqueueTx(ctx, tx, plan, pid, id, gen, hash); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// storeFile stores the tasks file as saved now (see storedFiles) for
// unit id's job and returns its hash. It runs before the enqueuing
// transaction begins: a transaction holds one of the pool's connections,
// and storing takes another, so with every unit of a plan enqueued at
// once, transactions waiting to store would hold the whole pool.
func (r *Runner) storeFile(ctx context.Context, plan dispatch.Plan, id string) (string, error) {
	if filepath.IsAbs(plan.File) {
		return "", fmt.Errorf("queue: the tasks file %s is outside the repository %s; workers find it by its path in the repository: move it into the repository", plan.File, plan.Repo)
	}
	data, err := os.ReadFile(r.TasksFile)
	if err != nil {
		return "", fmt.Errorf("queue: read %s to enqueue unit %s: %w", r.TasksFile, id, err)
	}
	return r.files.store(ctx, r.Pool, data)
}

// enqueueTx is enqueue in the transaction tx, of a job naming the tasks
// file's version hash.
func (r *Runner) enqueueTx(ctx context.Context, tx pgx.Tx, plan dispatch.Plan, pid, id string, gen int, hash string) error {
	tag, err := tx.Exec(ctx, `INSERT INTO statgraph_units (plan, unit, generation) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, pid, id, gen)
	if err != nil {
		return fmt.Errorf("queue: enqueue unit %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return nil
	}
	args := UnitArgs{PlanID: pid, Key: plan.Key, File: plan.File, Tag: plan.Tag, Unit: id, Generation: gen, Remote: r.Remote, TasksHash: hash,
		Base: r.remoteBase(ctx), Limits: r.Limits}
	job, err := r.client.InsertTx(ctx, tx, args, nil)
	if err != nil {
		return fmt.Errorf("queue: enqueue unit %s: %w", id, err)
	}
	if _, err := tx.Exec(ctx, `UPDATE statgraph_units SET job_id = $4 WHERE plan = $1 AND unit = $2 AND generation = $3`, pid, id, gen, job.Job.ID); err != nil {
		return fmt.Errorf("queue: enqueue unit %s: %w", id, err)
	}
	return nil
}

// wait waits until the unit's result is recorded, its job ends without
// one (errJobEnded), or ctx ends. The unit's row and its job are read by
// the Runner's one poll loop (see waiters.go) with every other waiting
// unit's, one query per Poll for all of them.
func (r *Runner) wait(ctx context.Context, pid, id string, gen int) (result, error) {
	key := waitKey{plan: pid, unit: id, gen: gen}
	ch := r.subscribe(key)
	defer r.unsubscribe(key)
	for {
		select {
		case <-ctx.Done():
			return result{}, fmt.Errorf("stopped while unit %s is in the queue; run statgraph run --queue again to wait for it: %w", id, context.Cause(ctx))
		case o := <-ch:
			if o.err != nil {
				if ctx.Err() == nil {
					return result{}, o.err
				}
				continue
			}
			return *o.res, nil
		}
	}
}
