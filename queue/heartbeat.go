package queue

// This file is statgraph_workers: each worker's row, written when it
// starts and every HeartbeatEvery after, with the units it holds and their
// limits, so that a coordinator, statgraph status --queue, the web UI and
// MCP can tell which workers are alive and what they do.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// HeartbeatEvery is how often a worker records that it is alive.
const HeartbeatEvery = 5 * time.Second

// Stale is how long after its last heartbeat a worker is presumed gone:
// three heartbeats missed.
const Stale = 3 * HeartbeatEvery

// WorkerInfo is one worker's row in statgraph_workers.
type WorkerInfo struct {
	ID          uuid.UUID `json:"id"`
	Host        string    `json:"host"`
	PID         int       `json:"pid"`
	Concurrency int       `json:"concurrency"`
	Started     time.Time `json:"started"`
	LastSeen    time.Time `json:"last_seen"`
	// Stopped is when the worker stopped (Ctrl-C, SIGTERM); nil while it
	// runs or when it died without saying so.
	Stopped *time.Time `json:"stopped,omitempty"`
	// Alive: not stopped, and seen within Stale (by the database's clock).
	Alive bool `json:"alive"`
	// Units are the units it holds now, with their run's limits.
	Units []HeldUnit `json:"units"`
}

// HeldUnit is a unit a worker holds.
type HeldUnit struct {
	Plan   string    `json:"plan"` // the tasks file's key (dispatch.Plan.Key)
	Unit   string    `json:"unit"`
	Since  time.Time `json:"since"`
	Limits Limits    `json:"limits"`
}

// heartbeat is a worker's side of statgraph_workers. Safe for concurrent
// use.
type heartbeat struct {
	mu    sync.Mutex // guards held
	held  map[string]HeldUnit
	nudge chan struct{} // asks the beat loop to write now
}

// hold records that the worker holds unit a from now until release.
func (h *heartbeat) hold(a UnitArgs) (release func()) {
	key := a.PlanID + "\x00" + a.Unit
	h.mu.Lock()
	if h.held == nil {
		h.held = map[string]HeldUnit{}
	}
	h.held[key] = HeldUnit{Plan: a.Key, Unit: a.Unit, Since: time.Now().UTC(), Limits: a.Limits}
	h.mu.Unlock()
	h.poke()
	return func() {
		h.mu.Lock()
		delete(h.held, key)
		h.mu.Unlock()
		h.poke()
	}
}

func (h *heartbeat) poke() {
	select {
	case h.nudge <- struct{}{}:
	default:
	}
}

func (h *heartbeat) units() []byte {
	h.mu.Lock()
	us := slices.SortedFunc(maps.Values(h.held), func(a, b HeldUnit) int { return a.Since.Compare(b.Since) })
	h.mu.Unlock()
	if us == nil {
		us = []HeldUnit{}
	}
	data, _ := json.Marshal(us)
	return data
}

// Heartbeat records the worker in statgraph_workers and keeps its row up
// to date (last seen, units in hand) every HeartbeatEvery, and at once
// when it takes or ends a unit, until ctx ends; it then marks the row
// stopped and returns nil. It fails, recording nothing, when the first
// write fails. A later write that fails is retried at the next beat.
// Call it once, after Start, in a goroutine the caller waits for.
func (w *Worker) Heartbeat(ctx context.Context, concurrency int) error {
	host, _ := os.Hostname()
	if _, err := w.Pool.Exec(ctx, `INSERT INTO statgraph_workers (id, host, pid, concurrency) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET last_seen = now(), stopped_at = NULL`, w.ID, host, os.Getpid(), concurrency); err != nil {
		return fmt.Errorf("queue: record this worker in statgraph_workers: %w", err)
	}
	t := time.NewTicker(HeartbeatEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), spendTimeout)
			defer cancel()
			w.Pool.Exec(sctx, `UPDATE statgraph_workers SET stopped_at = now(), last_seen = now(), units = '[]' WHERE id = $1`, w.ID)
			return nil
		case <-t.C:
		case <-w.beat.nudge:
		}
		bctx, cancel := context.WithTimeout(ctx, spendTimeout)
		w.Pool.Exec(bctx, `UPDATE statgraph_workers SET last_seen = now(), units = $2 WHERE id = $1`, w.ID, w.beat.units())
		cancel()
	}
}

// Workers returns every worker recorded in the queue at pool, those alive
// first, then by last seen, newest first.
func Workers(ctx context.Context, pool *pgxpool.Pool) ([]WorkerInfo, error) {
	rows, err := pool.Query(ctx, `SELECT id, host, pid, concurrency, started_at, last_seen, stopped_at,
			stopped_at IS NULL AND last_seen > now() - $1::bigint * interval '1 millisecond', units
		FROM statgraph_workers ORDER BY 8 DESC, last_seen DESC`, Stale.Milliseconds())
	if err != nil {
		return nil, fmt.Errorf("queue: read the workers: %w", err)
	}
	defer rows.Close()
	var out []WorkerInfo
	for rows.Next() {
		var wi WorkerInfo
		var units []byte
		if err := rows.Scan(&wi.ID, &wi.Host, &wi.PID, &wi.Concurrency, &wi.Started, &wi.LastSeen, &wi.Stopped, &wi.Alive, &units); err != nil {
			return nil, fmt.Errorf("queue: read the workers: %w", err)
		}
		if err := json.Unmarshal(units, &wi.Units); err != nil {
			return nil, fmt.Errorf("queue: worker %s has a corrupt units list in statgraph_workers: %w", wi.ID, err)
		}
		out = append(out, wi)
	}
	return out, rows.Err()
}

// liveWorkers counts the workers alive (see WorkerInfo.Alive).
func liveWorkers(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	var n int
	err := pool.QueryRow(ctx, `SELECT count(*) FROM statgraph_workers
		WHERE stopped_at IS NULL AND last_seen > now() - $1::bigint * interval '1 millisecond'`, Stale.Milliseconds()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("queue: count the live workers: %w", err)
	}
	return n, nil
}
