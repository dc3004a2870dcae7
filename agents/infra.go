package agents

import (
	"errors"
	"strings"

	"github.com/statgraph/statgraph/agents/llm"
)

// ErrInfrastructure matches every *InfraError with errors.Is.
var ErrInfrastructure = errors.New("agents: infrastructure error")

// InfraError is a failure of what a task runs on rather than of the task:
// the model server rejected the key or stayed unreachable through its
// retries, no model is configured, an agent CLI is missing or crashed
// before it did anything. Such an attempt says nothing about the task, so
// it must not use up a retry: the dispatcher leaves the task interrupted
// with Reason, to be continued once the setup is fixed. Reason says what
// went wrong and what to do; Err, when set, is the cause.
type InfraError struct {
	Reason string
	Err    error
}

// Error returns Reason, followed by the cause when Reason does not already
// include it.
func (e *InfraError) Error() string {
	if e.Err != nil && !strings.Contains(e.Reason, e.Err.Error()) {
		return e.Reason + ": " + e.Err.Error()
	}
	return e.Reason
}

// Unwrap returns the cause.
func (e *InfraError) Unwrap() error { return e.Err }

// Is reports whether target is ErrInfrastructure.
func (e *InfraError) Is(target error) bool { return target == ErrInfrastructure }

// AsInfraError reports whether err is an infrastructure error and returns
// it as one: an *InfraError anywhere in err's chain, or a model error that
// comes from the setup rather than the task (llm.ErrNoModel, ErrAuth,
// ErrNotFound, ErrServer after its retries, ErrRateLimited after its
// retries, ErrQuota). It returns nil, false for anything else, including
// context errors and usage limits with a reset time (llm.ErrLimit), which
// park the task instead (see package dispatch).
func AsInfraError(err error) (*InfraError, bool) {
	if err == nil {
		return nil, false
	}
	if ie, ok := errors.AsType[*InfraError](err); ok {
		return ie, true
	}
	for _, e := range []error{llm.ErrNoModel, llm.ErrAuth, llm.ErrNotFound, llm.ErrServer, llm.ErrRateLimited, llm.ErrQuota} {
		if errors.Is(err, e) {
			return &InfraError{Reason: err.Error(), Err: err}, true
		}
	}
	return nil, false
}
