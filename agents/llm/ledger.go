package llm

import "context"

// Ledger keeps a budget's spend outside this process, so that budgets in
// several processes (workers taking one run's units from a queue) count
// against one total. A Budget with a Ledger (NewSharedBudget) reads the
// total before every call it allows and records each charge there as well
// as in its own count.
//
// Implementations bound their own calls (a Budget's Check takes no
// context) and are safe for concurrent use.
type Ledger interface {
	// Total returns the tokens recorded so far by every process.
	Total(ctx context.Context) (int, error)
	// Add records n more tokens spent.
	Add(ctx context.Context, n int) error
}

// NewSharedBudget returns a budget of limit tokens (0 or less: unlimited)
// whose spend is the total l keeps: Check refuses a call once that total
// reaches limit, whoever spent it, and Add records each charge in l. When
// l cannot be read, Check refuses the call with l's error (the budget
// cannot be known to allow it); a charge l fails to record is kept in the
// budget's own count only.
func NewSharedBudget(limit int, l Ledger) *Budget {
	return &Budget{limit: limit, ledger: l}
}

// total returns what b has spent for a limit check: the shared total when
// b has a Ledger, else its own count.
func (b *Budget) total() (int, error) {
	if b.ledger == nil {
		return b.Spent(), nil
	}
	return b.ledger.Total(context.Background())
}
