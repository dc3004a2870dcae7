package queue

// This file is statgraph_spend: one row per coordinator's run, the run's
// spend as one total across every worker, and its limits.
//
// The row holds tokens and dollars side by side (tokens bigint, usd
// numeric, each with its limit, NULL for none): a budget in either is
// checked against the same row, and numeric keeps sums of small prices
// exact.

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// spendTimeout bounds one read or write of a run's spend.
const spendTimeout = 10 * time.Second

// Spend is a run's row in statgraph_spend, as an llm.Ledger: every worker
// running one of the run's units charges its model calls and agent CLIs'
// tokens there, and checks the run's budget against the total before
// every model call and agent CLI start. It is safe for concurrent use.
type Spend struct {
	Pool *pgxpool.Pool
	Run  uuid.UUID
}

// StartSpend records a new run of plan (its PlanID) with its token limit
// (0: none) and returns its Spend.
func StartSpend(ctx context.Context, pool *pgxpool.Pool, plan string, limitTokens int) (Spend, error) {
	s := Spend{Pool: pool, Run: uuid.New()}
	var limit *int64
	if limitTokens > 0 {
		l := int64(limitTokens)
		limit = &l
	}
	if _, err := pool.Exec(ctx, `INSERT INTO statgraph_spend (run, plan, limit_tokens) VALUES ($1, $2, $3)`, s.Run, plan, limit); err != nil {
		return Spend{}, fmt.Errorf("queue: record the run's spend: %w", err)
	}
	return s, nil
}

// Total implements llm.Ledger: the tokens the run's units spent so far, on
// every worker.
func (s Spend) Total(ctx context.Context) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, spendTimeout)
	defer cancel()
	var n int64
	if err := s.Pool.QueryRow(ctx, `SELECT tokens FROM statgraph_spend WHERE run = $1`, s.Run).Scan(&n); err != nil {
		return 0, fmt.Errorf("queue: read run %s's spend: %w", s.Run, err)
	}
	return int(n), nil
}

// Add implements llm.Ledger.
func (s Spend) Add(ctx context.Context, n int) error {
	ctx, cancel := context.WithTimeout(ctx, spendTimeout)
	defer cancel()
	if _, err := s.Pool.Exec(ctx, `UPDATE statgraph_spend SET tokens = tokens + $2, updated_at = now() WHERE run = $1`, s.Run, int64(n)); err != nil {
		return fmt.Errorf("queue: record run %s's spend: %w", s.Run, err)
	}
	return nil
}
