package llm

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharedMeter is a Meter shared by several budgets, as workers share the
// queue's row (queue.Spend).
type sharedMeter struct {
	mu    sync.Mutex
	total Usage
	err   error
}

func (m *sharedMeter) Total() (Usage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.total, m.err
}

func (m *sharedMeter) Add(u Usage) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.total = m.total.Plus(u)
	return nil
}

// The run budgets of two processes sharing a Meter refuse a call once
// the total reaches the limit, although each spent less; a Meter that
// cannot be read refuses the call.
func TestSharedMeter(t *testing.T) {
	m := &sharedMeter{}
	a, b := NewRunBudget(Limit{Tokens: 100}, m), NewRunBudget(Limit{Tokens: 100}, m)
	taskA := NewBudget(0, a)
	taskA.Add(Usage{Total: 60})
	require.NoError(t, b.Check(0), "60 of 100 spent")
	NewBudget(0, b).Add(Usage{Total: 50})
	assert.Equal(t, 110, m.total.Tokens())
	err := taskA.Check(0)
	require.ErrorIs(t, err, ErrBudget)
	assert.Contains(t, err.Error(), "global budget of 100 tokens spent (110 used)")

	// Dollars on the same meter.
	usd := NewRunBudget(Limit{USD: 1}, m)
	NewBudget(0, usd).Add(Usage{Total: 1, CostUSD: 1.5})
	err = NewBudget(0, a).Check(0)
	require.ErrorIs(t, err, ErrBudget)
	require.ErrorIs(t, NewBudget(0, usd).Check(0), ErrBudget, "$1.50 of $1 spent")

	m.err = errors.New("connection refused")
	err = NewRunBudget(Limit{Tokens: 1000}, m).Check(0)
	require.ErrorIs(t, err, ErrBudget)
	assert.Contains(t, err.Error(), "connection refused")
}
