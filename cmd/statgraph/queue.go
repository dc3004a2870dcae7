package main

// This file is what run needs for --queue: the coordinator's flags and its
// Runner (see package queue and README, Scale out).

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/internal/secret"
	"github.com/statgraph/statgraph/queue"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/postgres"
	"github.com/statgraph/statgraph/tasks"
)

// queueFlags are run's --queue and --remote.
type queueFlags struct {
	url, remote string
}

func (q *queueFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&q.url, "queue", "", "Postgres `URL` of a River queue: enqueue the tasks for statgraph worker processes instead of running them here (see README, Scale out)")
	fs.StringVar(&q.remote, "remote", "", "with --queue, the git remote `URL` workers clone from and push branches to (default: the repository itself, for workers on this machine)")
}

// check makes the checks of a run here (control.RunOptions.Check: the
// sandbox, the model, agent CLIs); with --queue the workers run the tasks
// and check their own setup, so nothing is checked here. Its errors are
// usage errors.
func (q *queueFlags) check(ctx context.Context, f *tasks.File, repo string, ro control.RunOptions) error {
	if q.url != "" {
		return nil
	}
	if q.remote != "" {
		return usagef("--remote needs --queue: a local run publishes into the repository itself")
	}
	if err := ro.Check(ctx, f, repo); err != nil {
		return usageError{err.Error()}
	}
	return nil
}

// coordinate makes d enqueue its units for workers and wait for their
// results; the returned function closes the connection.
func (q *queueFlags) coordinate(ctx context.Context, d *dispatch.Dispatcher, plan dispatch.Plan, file string) (func(), error) {
	pool, err := queue.Open(ctx, q.url)
	if err != nil {
		return nil, err
	}
	remote := q.remote
	if remote == "" {
		abs, err := filepath.Abs(plan.Repo)
		if err != nil {
			pool.Close()
			return nil, err
		}
		remote = abs
	}
	if err := recordQueue(plan, queueRecord{Queue: queue.WithoutPassword(q.url), Remote: remote}); err != nil {
		pool.Close()
		return nil, err
	}
	r, err := queue.NewRunner(pool, remote, file)
	if err != nil {
		pool.Close()
		return nil, err
	}
	d.Runner = r
	// Every ready unit is enqueued at once: the workers' concurrency is the
	// limit, not this process's.
	d.Jobs = max(d.Jobs, len(d.File.Units()))
	if d.Log != nil {
		fmt.Fprintf(d.Log, "units go to the queue at %s; workers push their branches to %s\n", queue.Redact(q.url), remote)
	}
	return pool.Close, nil
}

// queueReadUsage is the help of status's and history's --queue.
const queueReadUsage = "Postgres `URL` of the queue a run on workers used: read the checkpoints the workers keep there (default: the queue recorded for the plan by run --queue, else the local run store)"

// queueFile is where a coordinator records, in the plan's state directory,
// the queue and the remote its run used (see queueRecord).
func queueFile(plan dispatch.Plan) string { return filepath.Join(plan.Dir, "queue.json") }

// queueRecord is what a coordinator records for its plan: the queue
// (without a password), from which status and history read the workers'
// checkpoints without --queue, and the remote, on which clean deletes the
// work-in-progress branches of finished units.
type queueRecord struct {
	Queue  string `json:"queue"`
	Remote string `json:"remote"`
}

// recordQueue records r as the plan's queue.
func recordQueue(plan dispatch.Plan, r queueRecord) error {
	if err := plan.Ensure(); err != nil {
		return err
	}
	data, _ := json.Marshal(r)
	if err := os.WriteFile(queueFile(plan), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("record the queue of this plan: %w", err)
	}
	return nil
}

// recordedQueue returns the plan's queueRecord; zero when its runs used no
// queue.
func recordedQueue(plan dispatch.Plan) (queueRecord, error) {
	var r queueRecord
	data, err := os.ReadFile(queueFile(plan))
	if errors.Is(err, fs.ErrNotExist) {
		return r, nil
	}
	if err == nil {
		err = json.Unmarshal(data, &r)
	}
	if err != nil {
		return r, fmt.Errorf("read the queue this plan's run used from %s: %w; remove the file if the plan no longer runs on a queue", queueFile(plan), err)
	}
	return r, nil
}

// runStore is the store status and history read a plan's checkpoints
// from, and where it is, for messages.
type runStore struct {
	statgraph.Checkpointer
	where string
	close func()
}

// openRunStore opens the store that holds the plan's checkpoints: the
// queue's Postgres when url is set, or when a coordinator recorded one for
// the plan (see recordQueue; the password comes from PGPASSWORD or
// ~/.pgpass then, or pass --queue), where the workers keep them; otherwise
// the local SQLite store at path. It returns a nil Checkpointer when there
// is no local store (nothing has run). It reads only: a Postgres without
// statgraph's checkpoint schema is reported, not created.
func openRunStore(ctx context.Context, url, path string, plan dispatch.Plan) (runStore, error) {
	recorded := ""
	rec, err := recordedQueue(plan)
	if err != nil && url == "" {
		return runStore{}, err
	}
	if url == "" {
		if url = rec.Queue; url != "" {
			recorded = fmt.Sprintf(" (the queue this plan's run used, recorded in %s; pass --queue URL with its password, or set PGPASSWORD)", queueFile(plan))
		}
	}
	if url == "" {
		if _, err := os.Stat(path); err != nil {
			return runStore{}, nil
		}
		st, err := openStore(ctx, path)
		if err != nil {
			return runStore{}, err
		}
		return runStore{Checkpointer: st, where: path, close: func() { st.Close() }}, nil
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return runStore{}, usagef("--queue %q is not a Postgres connection string: %v", queue.Redact(url), err)
	}
	if pw, ok := secret.Lookup("PGPASSWORD"); ok && cfg.ConnConfig.Password == "" {
		// statgraph takes secret variables out of its environment at
		// start (see internal/secret), so pgx does not see this one.
		cfg.ConnConfig.Password = pw
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err == nil {
		err = pool.Ping(ctx)
		if err != nil {
			pool.Close()
		}
	}
	if err != nil {
		return runStore{}, fmt.Errorf("read checkpoints from Postgres at %s%s: %w", queue.Redact(url), recorded, err)
	}
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, postgres.DefaultSchema).Scan(&exists); err != nil || !exists {
		pool.Close()
		if err == nil {
			err = errors.New("no statgraph checkpoints there: has a worker run on this queue? (statgraph worker --queue URL)")
		}
		return runStore{}, fmt.Errorf("read checkpoints from Postgres at %s%s: %w", queue.Redact(url), recorded, err)
	}
	st, err := postgres.New(ctx, pool)
	if err != nil {
		pool.Close()
		return runStore{}, err
	}
	// The plan's threads there are scoped by the remote its run used (the
	// repository itself unless --remote named another; see queue.Scoped).
	remote := rec.Remote
	if remote == "" {
		remote = plan.Repo
	}
	return runStore{Checkpointer: queue.Scoped(st, remote), where: queue.Redact(url), close: func() { st.Close(); pool.Close() }}, nil
}

// cleanRemote deletes, on the remote the plan's last queue run used, the
// work-in-progress branches of its finished units (see queue.CleanWIP);
// nothing when the plan never ran on a queue.
func cleanRemote(ctx context.Context, stdout io.Writer, plan dispatch.Plan, f *tasks.File) error {
	r, err := recordedQueue(plan)
	if err != nil || r.Remote == "" {
		return err
	}
	units, err := queue.CleanWIP(ctx, plan.Repo, r.Remote, plan.Key, func(id string) string {
		t, ok := f.Task(id)
		if !ok {
			return ""
		}
		if t.Status == "" {
			return tasks.StatusPending
		}
		return t.Status
	})
	if len(units) > 0 {
		fmt.Fprintf(stdout, "deleted the work-in-progress branches of %d finished task(s) on %s: %s\n", len(units), r.Remote, strings.Join(units, ", "))
	}
	return err
}

// cleanQueueCheckpoints deletes (or with keep > 0 prunes) the checkpoints
// the workers kept in the queue's Postgres for the plan's finished tasks,
// as clean does in the local run store (dispatch.Dispatcher.CleanKeeping):
// the queue of url, else the one the plan's last queue run recorded;
// nothing when there is neither. A queue out of reach is an error saying
// how to give its password; the local cleaning is done by then.
func cleanQueueCheckpoints(ctx context.Context, stdout io.Writer, url string, plan dispatch.Plan, f *tasks.File, keep int) error {
	rs, err := queueCheckpoints(ctx, url, plan)
	if err != nil {
		return fmt.Errorf("%w; the local workspaces and checkpoints are cleaned, run clean again to delete the checkpoints in the queue", err)
	}
	if rs.Checkpointer == nil {
		return nil
	}
	defer rs.close()
	d := &dispatch.Dispatcher{File: f, Repo: plan.Repo, Checkpointer: rs.Checkpointer}
	res, err := d.CleanKeeping(ctx, keep)
	for _, u := range f.Units() {
		if n, ok := res.Pruned[u.ID]; ok {
			fmt.Fprintf(stdout, "task %s: deleted %d checkpoint(s) in %s, kept the last %d\n", u.ID, n, rs.where, keep)
		}
	}
	if len(res.Threads) > 0 {
		fmt.Fprintf(stdout, "deleted the checkpoints of %d finished task(s) in %s: %s\n", len(res.Threads), rs.where, strings.Join(res.Threads, ", "))
	}
	return err
}
