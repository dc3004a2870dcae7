package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SendBack makes the next coordinator of plan (a PlanID) run unit again
// although its newest generation has a done result: a person sent the
// task back (statgraph review) and its checkpoint now asks for a new
// attempt. It adds the next generation with no job and no result; a
// coordinator's RunUnit finds that generation's job gone and enqueues
// the one after, as for a job that ended without a result, and the
// worker taking it continues the unit's thread from its checkpoint. The
// result recorded before stays as it was. It fails, changing nothing,
// when the unit was never run on the queue or its newest generation has
// no result yet (it is still running).
func SendBack(ctx context.Context, pool *pgxpool.Pool, plan, unit string) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("queue: send unit %s back: %w", unit, err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var gen int
	var done bool
	err = tx.QueryRow(ctx, `SELECT generation, result IS NOT NULL FROM statgraph_units WHERE plan = $1 AND unit = $2
		ORDER BY generation DESC LIMIT 1 FOR UPDATE`, plan, unit).Scan(&gen, &done)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("queue: unit %s was never run on this queue; nothing to send back", unit)
	case err != nil:
		return fmt.Errorf("queue: send unit %s back: %w", unit, err)
	case !done:
		return fmt.Errorf("queue: unit %s is still in the queue (generation %d has no result yet); wait for it to end", unit, gen)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO statgraph_units (plan, unit, generation) VALUES ($1, $2, $3)`, plan, unit, gen+1); err != nil {
		return fmt.Errorf("queue: send unit %s back: %w", unit, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("queue: send unit %s back: %w", unit, err)
	}
	return nil
}
