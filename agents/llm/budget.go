package llm

import (
	"errors"
	"fmt"
	"math"
	"sync"
)

// Limit is what a [Budget] allows. A zero field is unlimited.
type Limit struct {
	Tokens int     // tokens, all kinds together (Usage.Tokens)
	USD    float64 // US dollars (Usage.CostUSD)
}

// Meter keeps the running total of a [Budget]. A Budget made by NewBudget
// keeps its own in memory; a Meter shared by several processes (a table in
// the queue's Postgres) makes the spend of a run's workers one total that
// every one of them checks. Its methods are called concurrently.
type Meter interface {
	// Add adds u to the total.
	Add(u Usage) error
	// Total returns the total so far.
	Total() (Usage, error)
}

// memMeter is the in-memory Meter of a Budget.
type memMeter struct {
	mu    sync.Mutex // guards total
	total Usage
}

func (m *memMeter) Add(u Usage) error {
	m.mu.Lock()
	m.total = m.total.Plus(u)
	m.mu.Unlock()
	return nil
}

func (m *memMeter) Total() (Usage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.total, nil
}

// Budget counts the tokens and dollars spent against a limit. A task's
// budget usually has the run's global budget as parent: spending on the
// task also spends on the parent, and a call is refused when either is
// spent.
//
// A Budget is checked before a call (a model call, or the start of an
// agent CLI) and charged after it, so spend can pass the limit by at most
// one call per caller: a global budget shared by tasks running in parallel
// can overshoot by one call per task. A usage that cannot be real
// (negative, implausibly large: [Usage.Check]) is refused, not charged,
// and kept as a warning (TakeWarnings). A dollar limit counts only priced
// tokens (Usage.CostUSD): tokens of a model without a price are counted
// in tokens only. A nil *Budget or a zero Budget is unlimited and has no
// parent. A Budget is safe for concurrent use.
type Budget struct {
	limit  Limit
	parent *Budget
	meter  Meter // nil: the zero Budget, which keeps no total
	run    bool  // a run's global budget (NewRunBudget)

	mu       sync.Mutex // guards warnings
	warnings []string
}

// NewBudget returns a budget of limit tokens (0 or less: unlimited) whose
// spending also counts against parent (nil: none).
func NewBudget(limit int, parent *Budget) *Budget {
	return NewBudgetOf(Limit{Tokens: limit}, parent, nil)
}

// NewBudgetOf returns a budget of limit whose spending also counts against
// parent (nil: none), its total kept by m (nil: in memory).
func NewBudgetOf(limit Limit, parent *Budget, m Meter) *Budget {
	if m == nil {
		m = &memMeter{}
	}
	return &Budget{limit: limit, parent: parent, meter: m}
}

// NewRunBudget returns the global budget of a run, of limit, its total kept
// by m (nil: in memory): the parent of the run's task budgets. Its errors
// name it the global budget even when it is checked itself (before a task
// starts).
func NewRunBudget(limit Limit, m Meter) *Budget {
	b := NewBudgetOf(limit, nil, m)
	b.run = true
	return b
}

// BudgetError is the error of a call a Budget refused. It matches
// [ErrBudget].
type BudgetError struct {
	// Global is true when the run's budget (an ancestor of the task's) is
	// spent, false for the task's own.
	Global bool
	Limit  Limit // the limit that was reached
	Spent  Usage // what was spent against it
	// Err, when set, is why the spend could not be read (the Meter failed).
	Err error
}

// Error says which budget is spent, by how much, and what to raise.
func (e *BudgetError) Error() string {
	name, tokens, usd := "task budget", "budget_tokens", "budget_usd"
	if e.Global {
		name, tokens, usd = "global budget", "--budget", "--budget-usd"
	}
	switch {
	case e.Err != nil:
		return fmt.Sprintf("%v: %s cannot be read: %v", ErrBudget, name, e.Err)
	case e.Limit.USD > 0 && e.Spent.CostUSD >= e.Limit.USD:
		return fmt.Sprintf("%v: %s of $%.2f spent ($%.4f used); raise %s or lower the work per task", ErrBudget, name, e.Limit.USD, e.Spent.CostUSD, usd)
	}
	return fmt.Sprintf("%v: %s of %d tokens spent (%d used); raise %s or lower the work per task", ErrBudget, name, e.Limit.Tokens, e.Spent.Tokens(), tokens)
}

// Is reports whether target is ErrBudget.
func (e *BudgetError) Is(target error) bool { return target == ErrBudget }

// Unwrap returns Err.
func (e *BudgetError) Unwrap() error { return e.Err }

// GlobalBudget returns the *BudgetError in err's chain when err is a call
// refused because the run's global budget is spent.
func GlobalBudget(err error) (*BudgetError, bool) {
	be, ok := errors.AsType[*BudgetError](err)
	return be, ok && be.Global
}

// Spent returns the tokens charged to b so far, including those charged
// through budgets that have b as parent. A nil Budget reports 0.
func (b *Budget) Spent() int { return b.Total().Tokens() }

// Total returns the usage charged to b so far, tokens and cost, including
// what was charged through budgets that have b as parent. A nil Budget,
// or one whose Meter fails, reports the zero Usage.
func (b *Budget) Total() Usage {
	if b == nil || b.meter == nil {
		return Usage{}
	}
	u, _ := b.meter.Total()
	return u
}

// Check returns a *[BudgetError] if the next call must not be made: b or
// one of its ancestors is already at or over one of its limits, or
// spending estimate more tokens (0 if unknown) would take it over its
// token limit. A nil Budget always allows the call.
func (b *Budget) Check(estimate int) error {
	for cur := b; cur != nil; cur = cur.parent {
		if cur.limit != (Limit{}) && cur.meter != nil {
			global := cur != b || cur.run
			spent, err := cur.meter.Total()
			if err != nil {
				return &BudgetError{Global: global, Limit: cur.limit, Err: err}
			}
			n := spent.Tokens()
			if (cur.limit.Tokens > 0 && (n >= cur.limit.Tokens || n+estimate > cur.limit.Tokens)) ||
				(cur.limit.USD > 0 && spent.CostUSD >= cur.limit.USD) {
				return &BudgetError{Global: global, Limit: cur.limit, Spent: spent}
			}
		}
	}
	return nil
}

// Restore records u, spent on b before this process started (read back
// from a checkpoint when a task is resumed), so that b's limits and Total
// count the task's whole spend. Unlike Add it does not charge b's
// ancestors: the global budget counts the current run only. Restore is
// meant for a budget no call has used yet; it adds to whatever b has
// spent. A nil Budget, or a u that is not a usage (Usage.Check), does
// nothing.
func (b *Budget) Restore(u Usage) {
	if b == nil || b.meter == nil || u == (Usage{}) || u.Check(math.MaxInt) != nil {
		return
	}
	if err := b.meter.Add(u); err != nil {
		b.warn(fmt.Sprintf("the spend of earlier runs could not be counted: %v", err))
	}
}

// Add charges u, the usage of one model call, to b and all its ancestors.
// A usage that Usage.Check refuses with MaxCallTokens is not charged: b
// keeps a warning saying so. A nil Budget ignores u.
func (b *Budget) Add(u Usage) { b.add(u, MaxCallTokens, "a model call") }

// AddRun is Add for the usage an agent CLI reports of one run (many model
// calls), checked against MaxRunTokens.
func (b *Budget) AddRun(u Usage) { b.add(u, MaxRunTokens, "the agent CLI") }

func (b *Budget) add(u Usage, limit int, who string) {
	if b == nil {
		return
	}
	if err := u.Check(limit); err != nil {
		b.warn(fmt.Sprintf("usage reported by %s refused, not counted: %v", who, err))
		return
	}
	for cur := b; cur != nil; cur = cur.parent {
		if cur.meter == nil {
			continue
		}
		if err := cur.meter.Add(u); err != nil {
			b.warn(fmt.Sprintf("usage of %s could not be counted: %v", who, err))
		}
	}
}

func (b *Budget) warn(w string) {
	b.mu.Lock()
	b.warnings = append(b.warnings, w)
	b.mu.Unlock()
}

// TakeWarnings returns the warnings b kept since the last call (refused
// usages) and forgets them. A nil Budget has none.
func (b *Budget) TakeWarnings() []string {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	w := b.warnings
	b.warnings = nil
	return w
}

// Limit returns b's own limit; a nil Budget's is the zero Limit.
func (b *Budget) Limit() Limit {
	if b == nil {
		return Limit{}
	}
	return b.limit
}
