package llm

import (
	"context"
	"fmt"
	"sync"
)

// Usage is the token count of one call, or the sum of several.
type Usage struct {
	Prompt     int
	Completion int
	Total      int
}

// plus returns the element-wise sum of u and v.
func (u Usage) plus(v Usage) Usage {
	return Usage{
		Prompt:     u.Prompt + v.Prompt,
		Completion: u.Completion + v.Completion,
		Total:      u.Total + v.Total,
	}
}

// tokens is the number of tokens u charges to a budget: Total, or
// Prompt+Completion when a server reports no total.
func (u Usage) tokens() int {
	if u.Total > 0 {
		return u.Total
	}
	return u.Prompt + u.Completion
}

// Budget counts the tokens spent against a limit. A task's budget usually has
// the run's global budget as parent: spending on the task also spends on the
// parent, and a call is refused when either is spent.
//
// A Budget is checked before a call and charged after it, so spend can pass
// the limit by at most the tokens of one call per caller: a global budget
// shared by tasks running in parallel can overshoot by one call per task. A
// nil *Budget or a zero Budget is unlimited and has no parent. A Budget is
// safe for concurrent use.
type Budget struct {
	limit  int
	parent *Budget
	ledger Ledger // the shared total (NewSharedBudget); nil: this count only

	mu    sync.Mutex // guards spent
	spent int
}

// NewBudget returns a budget of limit tokens (0 or less: unlimited) whose
// spending also counts against parent (nil: none).
func NewBudget(limit int, parent *Budget) *Budget {
	return &Budget{limit: limit, parent: parent}
}

// Spent returns the tokens charged to b so far, including those charged
// through budgets that have b as parent. A nil Budget reports 0.
func (b *Budget) Spent() int {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spent
}

// Check returns an error matching [ErrBudget] if the next call must not be
// made: b or one of its ancestors is already at or over its limit, or spending
// estimate more tokens (0 if unknown) would take it over. The error names the
// budget: b itself is "task budget", its ancestors "global budget". A nil
// Budget always allows the call.
func (b *Budget) Check(estimate int) error {
	name := "task budget"
	for cur := b; cur != nil; cur = cur.parent {
		if cur.limit > 0 {
			spent, err := cur.total()
			if err != nil {
				return fmt.Errorf("%s: read the spend shared with other workers: %w", name, err)
			}
			if spent >= cur.limit || spent+estimate > cur.limit {
				raise := "raise budget_tokens or lower the work per task"
				if cur != b {
					raise = "run statgraph resume with a larger --budget to continue"
				}
				return fmt.Errorf("%w: %s of %d tokens spent (%d used); %s",
					ErrBudget, name, cur.limit, spent, raise)
			}
		}
		name = "global budget"
	}
	return nil
}

// Restore records n tokens spent on b before this process started (read
// back from a checkpoint when a task is resumed), so that b's limit and
// Spent count the task's whole spend. Unlike Add it does not charge b's
// ancestors: the global budget counts the current run only. Restore is meant
// for a budget no call has used yet; it adds to whatever b has spent. A nil
// Budget or n <= 0 does nothing.
func (b *Budget) Restore(n int) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	b.spent += n
	b.mu.Unlock()
}

// Add charges u to b and all its ancestors. A nil Budget ignores it.
func (b *Budget) Add(u Usage) {
	n := u.tokens()
	for cur := b; cur != nil; cur = cur.parent {
		cur.mu.Lock()
		cur.spent += n
		cur.mu.Unlock()
		if cur.ledger != nil && n > 0 {
			_ = cur.ledger.Add(context.Background(), n) // kept in spent when it fails (NewSharedBudget)
		}
	}
}
