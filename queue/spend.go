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

	"github.com/statgraph/statgraph/agents/llm"
)

// spendTimeout bounds one read or write of a run's spend.
const spendTimeout = 10 * time.Second

// Spend is a run's row in statgraph_spend, as an llm.Meter: every worker
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

// Total implements llm.Meter: what the run's units spent so far, on every
// worker, in tokens and (for priced tokens) US dollars. The row keeps no
// split of input and output, so the Usage holds the total only.
func (s Spend) Total() (llm.Usage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), spendTimeout)
	defer cancel()
	var n int64
	var usd float64
	if err := s.Pool.QueryRow(ctx, `SELECT tokens, usd::float8 FROM statgraph_spend WHERE run = $1`, s.Run).Scan(&n, &usd); err != nil {
		return llm.Usage{}, fmt.Errorf("queue: read run %s's spend: %w", s.Run, err)
	}
	return llm.Usage{Total: int(n), CostUSD: usd}, nil
}

// Add implements llm.Meter: u's tokens and cost are added to the row.
func (s Spend) Add(u llm.Usage) error {
	ctx, cancel := context.WithTimeout(context.Background(), spendTimeout)
	defer cancel()
	if _, err := s.Pool.Exec(ctx, `UPDATE statgraph_spend SET tokens = tokens + $2, usd = usd + $3::numeric, updated_at = now() WHERE run = $1`,
		s.Run, int64(u.Tokens()), u.CostUSD); err != nil {
		return fmt.Errorf("queue: record run %s's spend: %w", s.Run, err)
	}
	return nil
}
