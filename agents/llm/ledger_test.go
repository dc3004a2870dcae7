package llm

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memLedger is a Ledger shared by several budgets, as workers share the
// queue's row.
type memLedger struct {
	mu    sync.Mutex
	total int
	err   error
}

func (l *memLedger) Total(context.Context) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total, l.err
}

func (l *memLedger) Add(_ context.Context, n int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total += n
	return nil
}

// Budgets of two processes sharing a Ledger refuse a call once the total
// reaches the limit, although each spent less; a Ledger that cannot be
// read refuses the call.
func TestSharedBudget(t *testing.T) {
	l := &memLedger{}
	a, b := NewSharedBudget(100, l), NewSharedBudget(100, l)
	taskA := NewBudget(0, a)
	taskA.Add(Usage{Total: 60})
	require.NoError(t, b.Check(0), "60 of 100 spent")
	NewBudget(0, b).Add(Usage{Total: 50})
	assert.Equal(t, 110, l.total)
	assert.Equal(t, 60, a.Spent(), "a's own count")
	err := taskA.Check(0)
	require.ErrorIs(t, err, ErrBudget)
	assert.Contains(t, err.Error(), "global budget of 100 tokens spent (110 used); run statgraph resume with a larger --budget")

	l.err = errors.New("connection refused")
	err = NewSharedBudget(1000, l).Check(0)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "connection refused")

	// Unlimited: the spend is recorded, never read.
	u := NewSharedBudget(0, l)
	require.NoError(t, u.Check(0))
	u.Add(Usage{Total: 5})
	assert.Equal(t, 115, l.total)
}
