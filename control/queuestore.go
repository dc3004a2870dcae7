package control

// This file is what a plan whose run went to workers (statgraph run
// --queue) leaves to read: the queue and remote recorded for the plan, and
// the workers' checkpoints in the queue's Postgres (see package queue).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/internal/secret"
	"github.com/statgraph/statgraph/queue"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/postgres"
)

// queueFile is where a coordinator records, in the plan's state directory,
// the queue and the remote its run used (see QueueRecord).
func queueFile(plan dispatch.Plan) string { return filepath.Join(plan.Dir, "queue.json") }

// QueueRecord is what a coordinator (statgraph run --queue) records for
// its plan: the queue (without a password), from which every front end
// reads the workers' checkpoints, and the remote, on which Clean deletes
// the work-in-progress branches of finished units.
type QueueRecord struct {
	Queue  string `json:"queue"`
	Remote string `json:"remote"`
}

// RecordQueue records r as the plan's queue (its password left out). It
// fails when the plan's state directory cannot be written.
func RecordQueue(plan dispatch.Plan, r QueueRecord) error {
	if err := plan.Ensure(); err != nil {
		return err
	}
	r.Queue = queue.WithoutPassword(r.Queue)
	data, _ := json.Marshal(r)
	if err := os.WriteFile(queueFile(plan), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("record the queue of this plan: %w", err)
	}
	return nil
}

// RecordedQueue returns the plan's QueueRecord; the zero record when its
// runs used no queue. It fails, saying what to do, when the record
// cannot be read.
func RecordedQueue(plan dispatch.Plan) (QueueRecord, error) {
	var r QueueRecord
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

// queueStore is the workers' run store of a plan, in the queue's Postgres.
type queueStore struct {
	statgraph.Checkpointer
	pool   *pgxpool.Pool // the queue's Postgres: its workers (Workers)
	where  string        // the queue's URL without its password, for messages
	remote string        // the remote the plan's run used: its PlanID's
	close  func()
}

// queueConnectTimeout bounds the connection to a queue's Postgres.
const queueConnectTimeout = 30 * time.Second

// openQueueStore opens the store that holds the checkpoints of the plan's
// run on workers: the queue's Postgres at url, else the queue a
// coordinator recorded for the plan (see RecordQueue; the password comes
// from PGPASSWORD or ~/.pgpass then, or give the URL). It returns a zero
// queueStore when the plan's runs used no queue. It reads only: a
// Postgres without statgraph's checkpoint schema is reported, not
// created.
func openQueueStore(ctx context.Context, url string, plan dispatch.Plan) (queueStore, error) {
	rec, err := RecordedQueue(plan)
	if err != nil && url == "" {
		return queueStore{}, err
	}
	recorded := ""
	if url == "" {
		if url = rec.Queue; url == "" {
			return queueStore{}, nil
		}
		recorded = fmt.Sprintf(" (the queue this plan's run used, recorded in %s; pass --queue URL with its password, or set PGPASSWORD)", queueFile(plan))
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return queueStore{}, kinded(KindInvalid, fmt.Errorf("--queue %q is not a Postgres connection string: %w", queue.Redact(url), err))
	}
	if pw, ok := secret.Lookup("PGPASSWORD"); ok && cfg.ConnConfig.Password == "" {
		// statgraph takes secret variables out of its environment at
		// start (see internal/secret), so pgx does not see this one.
		cfg.ConnConfig.Password = pw
	}
	ctx, cancel := context.WithTimeout(ctx, queueConnectTimeout)
	defer cancel()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err == nil {
		err = pool.Ping(ctx)
		if err != nil {
			pool.Close()
		}
	}
	if err != nil {
		return queueStore{}, fmt.Errorf("read checkpoints from Postgres at %s%s: %w", queue.Redact(url), recorded, err)
	}
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, postgres.DefaultSchema).Scan(&exists); err != nil || !exists {
		pool.Close()
		if err == nil {
			err = errors.New("no statgraph checkpoints there: has a worker run on this queue? (statgraph worker --queue URL)")
		}
		return queueStore{}, fmt.Errorf("read checkpoints from Postgres at %s%s: %w", queue.Redact(url), recorded, err)
	}
	st, err := postgres.New(ctx, pool)
	if err != nil {
		pool.Close()
		return queueStore{}, err
	}
	// The plan's threads there are scoped by the remote its run used (the
	// repository itself unless --remote named another; see queue.Scoped).
	remote := rec.Remote
	if remote == "" {
		remote = plan.Repo
	}
	return queueStore{Checkpointer: queue.Scoped(st, remote), pool: pool, where: queue.Redact(url), remote: remote, close: func() { st.Close(); pool.Close() }}, nil
}

// WorkerInfo is a worker of the queue a plan's runs used, as every front
// end lists it (see Control.Workers).
type WorkerInfo struct {
	ID          string     `json:"id"`
	Host        string     `json:"host"`
	PID         int        `json:"pid"`
	Concurrency int        `json:"concurrency"`
	Started     time.Time  `json:"started"`
	LastSeen    time.Time  `json:"last_seen"`
	Stopped     *time.Time `json:"stopped,omitempty"`
	// Alive: not stopped, and its last heartbeat within queue.Stale.
	Alive bool `json:"alive"`
	// Units are the units it holds now.
	Units []WorkerUnit `json:"units"`
}

// WorkerUnit is a unit a worker holds, with the limits of its run as the
// worker applies them (queue.Limits).
type WorkerUnit struct {
	Plan   string    `json:"plan"`
	Unit   string    `json:"unit"`
	Since  time.Time `json:"since"`
	Limits string    `json:"limits"`
}

// Workers returns the workers of the queue the plan's runs used (the
// queue Options.Queue names, else the one recorded; see queue.Workers),
// alive first: their last heartbeat, the units they hold with their
// run's limits. It returns nil when the plan's runs used no queue, or
// the Control reads an Options.Checkpointer; QueueErr says why when the
// recorded queue is out of reach. statgraph status --queue, the web UI
// (GET /api/workers) and MCP (status) all list them through it.
func (c *Control) Workers(ctx context.Context) ([]WorkerInfo, error) {
	c.storeMu.Lock()
	_, err := c.workers(ctx)
	pool := c.queue.pool
	c.storeMu.Unlock()
	if err != nil || pool == nil {
		return nil, err
	}
	ws, err := queue.Workers(ctx, pool)
	if err != nil {
		return nil, err
	}
	out := make([]WorkerInfo, len(ws))
	for i, w := range ws {
		out[i] = WorkerInfo{ID: w.ID.String(), Host: w.Host, PID: w.PID, Concurrency: w.Concurrency, Started: w.Started,
			LastSeen: w.LastSeen, Stopped: w.Stopped, Alive: w.Alive, Units: []WorkerUnit{}}
		for _, u := range w.Units {
			out[i].Units = append(out[i].Units, WorkerUnit{Plan: u.Plan, Unit: u.Unit, Since: u.Since, Limits: u.Limits.String()})
		}
	}
	return out, nil
}
