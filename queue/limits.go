package queue

// This file is the run's limits a unit carries to the worker that runs it.

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/dispatch"
)

// Limits are the coordinator's run flags a worker applies to each unit of
// the run, so that every flag means with --queue what it means for a run
// in one process. The zero value is a run with none given: no budget or
// deadline, the worker's defaults for each model request and response,
// workspaces removed once published.
type Limits struct {
	// Run names the run's row in statgraph_spend (see Spend): the run's
	// token spend, one total across workers. uuid.Nil: the unit was
	// enqueued by a statgraph that kept none, and its spend is not shared.
	Run uuid.UUID `json:"run,omitzero"`
	// BudgetTokens is the run's --budget, the limit of that total; 0: none.
	BudgetTokens int `json:"budget_tokens,omitempty"`
	// BudgetUSD is the run's --budget-usd, the limit of the same total in
	// US dollars (priced tokens only); 0: none.
	BudgetUSD float64 `json:"budget_usd,omitempty"`
	// TaskTimeout is --task-timeout: the deadline of a task that sets no
	// "timeout"; 0: none.
	TaskTimeout time.Duration `json:"task_timeout,omitempty"`
	// RequestTimeout is --request-timeout, the bound on each model
	// request of a task that sets no request_timeout; 0: llm's default.
	RequestTimeout time.Duration `json:"request_timeout,omitempty"`
	// MaxResponseBytes is --max-response-bytes; 0: llm's default.
	MaxResponseBytes int64 `json:"max_response_bytes,omitempty"`
	// KeepWorkspaces is --keep-workspaces: the worker keeps each finished
	// unit's workspace under its state root.
	KeepWorkspaces bool `json:"keep_workspaces,omitempty"`
	// ParkAfter is --park-after: a 429 asking to wait longer parks the
	// unit (llm.Config.ParkAfter); 0: the worker's default.
	ParkAfter time.Duration `json:"park_after,omitempty"`
	// ParkMax is --park-max, the longest a unit stays parked by a usage
	// limit (see dispatch.Dispatcher.ParkMax); 0: the default, a day.
	ParkMax time.Duration `json:"park_max,omitempty"`
	// ParkDefault is --park-default, how long a limit with no reset time
	// parks a unit (dispatch.Dispatcher.ParkDefault); 0: 15 minutes.
	ParkDefault time.Duration `json:"park_default,omitempty"`
	// Prices are the run's --prices, over the built-in table and the
	// tasks file's defaults.prices (which the worker reads from the file
	// itself), so that cost on a worker is the run's; nil: none given.
	Prices llm.Prices `json:"prices,omitempty"`
}

// String says the limits as a worker applies them, for its log.
func (l Limits) String() string {
	var b strings.Builder
	switch {
	case l.BudgetTokens > 0 && l.BudgetUSD > 0:
		fmt.Fprintf(&b, "budget %d tokens and $%g for the run, shared by its workers", l.BudgetTokens, l.BudgetUSD)
	case l.BudgetTokens > 0:
		fmt.Fprintf(&b, "budget %d tokens for the run, shared by its workers", l.BudgetTokens)
	case l.BudgetUSD > 0:
		fmt.Fprintf(&b, "budget $%g for the run, shared by its workers", l.BudgetUSD)
	default:
		b.WriteString("no budget")
	}
	if l.TaskTimeout > 0 {
		fmt.Fprintf(&b, ", task timeout %s", l.TaskTimeout)
	} else {
		b.WriteString(", no task timeout")
	}
	if l.RequestTimeout > 0 {
		fmt.Fprintf(&b, ", request timeout %s", l.RequestTimeout)
	} else {
		b.WriteString(", request timeout default")
	}
	if l.MaxResponseBytes > 0 {
		fmt.Fprintf(&b, ", max response %d bytes", l.MaxResponseBytes)
	} else {
		b.WriteString(", max response default")
	}
	if l.KeepWorkspaces {
		b.WriteString(", workspaces kept")
	}
	if l.ParkAfter > 0 {
		fmt.Fprintf(&b, ", park after %s", l.ParkAfter)
	}
	if l.ParkMax > 0 {
		fmt.Fprintf(&b, ", park max %s", l.ParkMax)
	}
	if l.ParkDefault > 0 {
		fmt.Fprintf(&b, ", park default %s", l.ParkDefault)
	}
	if len(l.Prices) > 0 {
		fmt.Fprintf(&b, ", prices of %d models from --prices", len(l.Prices))
	}
	return b.String()
}

// apply sets the limits on d, the dispatcher running one of the run's
// units on a worker: the deadline, the bounds on model requests and
// responses, whether workspaces are kept, how long a unit may park, the
// run's prices, and a budget whose spend is
// the run's shared total (see Spend), recorded even when the run has no
// budget.
func (l Limits) apply(d *dispatch.Dispatcher, pool *pgxpool.Pool) {
	d.TaskTimeout = l.TaskTimeout
	if l.RequestTimeout > 0 {
		d.Model.Timeout = l.RequestTimeout
	}
	if l.MaxResponseBytes > 0 {
		d.Model.MaxResponseBytes = l.MaxResponseBytes
	}
	d.KeepWorkspaces = l.KeepWorkspaces
	if l.ParkAfter > 0 {
		d.Model.ParkAfter = l.ParkAfter
	}
	d.ParkMax, d.ParkDefault = l.ParkMax, l.ParkDefault
	if len(l.Prices) > 0 {
		d.Prices = l.Prices
	}
	switch {
	case l.Run != uuid.Nil:
		d.Budget = llm.NewRunBudget(llm.Limit{Tokens: l.BudgetTokens, USD: l.BudgetUSD}, Spend{Pool: pool, Run: l.Run})
	case l.BudgetTokens > 0 || l.BudgetUSD > 0:
		d.Budget = llm.NewRunBudget(llm.Limit{Tokens: l.BudgetTokens, USD: l.BudgetUSD}, nil)
	}
}
