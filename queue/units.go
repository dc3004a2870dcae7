package queue

// This file is statgraph_units: one row per (plan, unit, generation), the
// attempt token that fences publishing, and the recorded result.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/statgraph/statgraph/tasks"
)

// UnitArgs is a unit job: everything a worker needs to run the unit
// without the coordinator's disk.
type UnitArgs struct {
	PlanID     string `json:"plan_id"`    // the plan's identity in the queue: Remote and Key
	Key        string `json:"key"`        // dispatch.Plan.Key: branches statgraph/<Key>/<unit>, threads
	File       string `json:"file"`       // the tasks file's path in the repository, slash-separated
	Tag        string `json:"tag"`        // the tag in use
	Unit       string `json:"unit"`       // the unit's id
	Generation int    `json:"generation"` // which run of the unit: 1, then one more each time it is run again
	Remote     string `json:"remote"`     // the git remote workers clone from and push to
	// TasksHash names the tasks file as saved when the unit was enqueued,
	// in statgraph_files (see files.go): a job's size does not grow with
	// the plan.
	TasksHash string `json:"tasks_hash"`
	// Base is the commit of the remote's default branch when the
	// coordinator started enqueuing ("" when it could not read it): a
	// worker whose clone is at it does not fetch for a unit without
	// dependencies (a fetch is a few git processes per unit).
	Base string `json:"base,omitempty"`
	// Limits are the run's limits, which the worker applies to the unit.
	Limits Limits `json:"limits,omitzero"`
}

// Kind is River's name for unit jobs.
func (UnitArgs) Kind() string { return "statgraph_unit" }

// result is a unit's recorded outcome, as JSON in statgraph_units.result.
type result struct {
	Status       string     `json:"status"`
	Reason       string     `json:"reason,omitempty"`
	RetryCount   int        `json:"retry_count"`
	ErrorHistory []string   `json:"error_history,omitempty"`
	FailedAt     *time.Time `json:"failed_at,omitempty"`
	ParkedUntil  *time.Time `json:"parked_until,omitempty"` // a parked unit's reset: the coordinator runs it again then
	Branch       string     `json:"branch,omitempty"`
	Worker       string     `json:"worker"`
	// Commit is the branch's commit when the result was staged (see stage).
	Commit string `json:"commit,omitempty"`
	// Tokens is what the unit's model calls and agent CLIs used.
	Tokens int `json:"tokens,omitempty"`
}

func (r result) taskResult() tasks.Outcome {
	return tasks.Outcome{Status: r.Status, Reason: r.Reason, RetryCount: r.RetryCount, ErrorHistory: r.ErrorHistory, FailedAt: r.FailedAt, ParkedUntil: r.ParkedUntil}
}

// ErrFenced is returned when a worker's token is no longer the unit's: its
// lease ran out and River gave the unit to another worker, the result is
// already recorded, or the coordinator has run the unit again as a newer
// generation. Its result is refused.
var ErrFenced = errors.New("queue: this worker no longer holds the unit (its lease ran out and another worker took it over); result refused")

// claim makes token the unit's current token and returns the result an
// earlier attempt staged (nil for none; see stage). done is true when a
// result is already recorded (a worker died after recording it, before
// River marked the job complete): there is nothing left to do.
//
// lease is how long the worker may hold the unit (0: unbounded); the
// coordinator runs the unit again as a new generation only once it is
// over (see Runner).
func claim(ctx context.Context, pool *pgxpool.Pool, a UnitArgs, token, worker uuid.UUID, lease time.Duration) (staged *result, done bool, err error) {
	var data []byte
	err = pool.QueryRow(ctx, `UPDATE statgraph_units
		SET token = $4, worker = $5, claims = claims + 1, started_at = coalesce(started_at, now()),
			lease_until = CASE WHEN $6::bigint > 0 THEN now() + $6::bigint * interval '1 millisecond' END
		WHERE plan = $1 AND unit = $2 AND generation = $3 AND result IS NULL
		RETURNING staged`,
		a.PlanID, a.Unit, a.Generation, token, worker, lease.Milliseconds()).Scan(&data)
	if err == nil {
		if data == nil {
			return nil, false, nil
		}
		var r result
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, false, nil // an unreadable hint: run the unit
		}
		return &r, false, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, false, fmt.Errorf("queue: take unit %s: %w", a.Unit, err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM statgraph_units WHERE plan = $1 AND unit = $2 AND generation = $3`,
		a.PlanID, a.Unit, a.Generation).Scan(&n); err != nil {
		return nil, false, fmt.Errorf("queue: take unit %s: %w", a.Unit, err)
	}
	if n == 0 {
		return nil, false, fmt.Errorf("queue: unit %s generation %d of %s has no row in statgraph_units; the job is stale", a.Unit, a.Generation, a.PlanID)
	}
	return nil, true, nil
}

// stage records r (with its branch's commit) as the result the worker
// holding token is about to publish, so that a worker taking the unit over
// after a crash in the middle of publishing can finish the publication
// instead of running the unit again. It returns ErrFenced, changing
// nothing, when token no longer holds the unit.
func stage(ctx context.Context, pool *pgxpool.Pool, a UnitArgs, token uuid.UUID, r result) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	tag, err := pool.Exec(ctx, `UPDATE statgraph_units SET staged = $5
		WHERE plan = $1 AND unit = $2 AND generation = $3 AND token = $4 AND result IS NULL`,
		a.PlanID, a.Unit, a.Generation, token, data)
	if err != nil {
		return fmt.Errorf("queue: record unit %s: %w", a.Unit, err)
	}
	if tag.RowsAffected() == 0 {
		return ErrFenced
	}
	return nil
}

// publish runs push and records r, in one transaction that holds the
// unit's row locked and still finds token there; otherwise nothing is
// pushed, the refusal is recorded, and publish returns ErrFenced. A push
// error rolls back: no result is recorded and the job is retried.
//
// The row stays locked while push runs. So that a worker that stalls there
// (stopped, or cut off from the network) does not hold it for ever, the
// transaction's session is ended by Postgres once idle for hold (0: never):
// its lock is released, its commit fails, and the worker that takes the
// unit over publishes. A push that then arrives late is refused by the
// remote itself, since git updates a branch only from the value the push
// saw (the taking-over worker has moved it).
func publish(ctx context.Context, pool *pgxpool.Pool, a UnitArgs, token, worker uuid.UUID, r result, hold time.Duration, push func() error) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("queue: record unit %s: %w", a.Unit, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if hold > 0 {
		if _, err := tx.Exec(ctx, fmt.Sprintf("SET LOCAL idle_in_transaction_session_timeout = %d", hold.Milliseconds())); err != nil {
			return fmt.Errorf("queue: record unit %s: %w", a.Unit, err)
		}
	}
	var cur *uuid.UUID
	var recorded, newer bool
	err = tx.QueryRow(ctx, `SELECT token, result IS NOT NULL, EXISTS (SELECT 1 FROM statgraph_units n
			WHERE n.plan = u.plan AND n.unit = u.unit AND n.generation > u.generation)
		FROM statgraph_units u
		WHERE plan = $1 AND unit = $2 AND generation = $3 FOR UPDATE`, a.PlanID, a.Unit, a.Generation).Scan(&cur, &recorded, &newer)
	if err != nil {
		return fmt.Errorf("queue: record unit %s: %w", a.Unit, err)
	}
	if cur == nil || *cur != token || recorded || newer {
		tx.Rollback(ctx)
		return refuse(ctx, pool, a, token, worker)
	}
	if push != nil {
		if err := push(); err != nil {
			return err
		}
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE statgraph_units SET result = $4, finished_at = now()
		WHERE plan = $1 AND unit = $2 AND generation = $3`, a.PlanID, a.Unit, a.Generation, data); err != nil {
		return fmt.Errorf("queue: record unit %s: %w", a.Unit, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("queue: record unit %s: %w", a.Unit, err)
	}
	return nil
}

// refuse records that the worker's result for the unit was refused and
// returns ErrFenced.
func refuse(ctx context.Context, pool *pgxpool.Pool, a UnitArgs, token, worker uuid.UUID) error {
	if _, err := pool.Exec(ctx, `INSERT INTO statgraph_refusals (plan, unit, generation, token, worker) VALUES ($1, $2, $3, $4, $5)`,
		a.PlanID, a.Unit, a.Generation, token, worker); err != nil {
		return fmt.Errorf("%w (and recording the refusal failed: %v)", ErrFenced, err)
	}
	return ErrFenced
}

// holds reports whether token is still the unit's and no result is
// recorded; on error it reports true (the caller then lets River retry).
func holds(ctx context.Context, pool *pgxpool.Pool, a UnitArgs, token uuid.UUID) bool {
	var ok bool
	err := pool.QueryRow(ctx, `SELECT token = $4 AND result IS NULL FROM statgraph_units
		WHERE plan = $1 AND unit = $2 AND generation = $3`, a.PlanID, a.Unit, a.Generation, token).Scan(&ok)
	return err != nil || ok
}

// latest returns the unit's newest generation and its result (nil while
// none is recorded); generation 0 when the unit was never enqueued.
func latest(ctx context.Context, pool *pgxpool.Pool, plan, unit string) (int, *result, error) {
	var gen int
	var data []byte
	err := pool.QueryRow(ctx, `SELECT generation, result FROM statgraph_units WHERE plan = $1 AND unit = $2
		ORDER BY generation DESC LIMIT 1`, plan, unit).Scan(&gen, &data)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, fmt.Errorf("queue: read unit %s: %w", unit, err)
	}
	if data == nil {
		return gen, nil, nil
	}
	var r result
	if err := json.Unmarshal(data, &r); err != nil {
		return 0, nil, fmt.Errorf("queue: unit %s generation %d has a corrupt result in statgraph_units: %w", unit, gen, err)
	}
	return gen, &r, nil
}
