package tasks

import "github.com/statgraph/statgraph/agents"

// infraResult returns the result of a unit stopped by an infrastructure
// error (see agents.InfraError): interrupted, with the reason and what to
// do, and its retry count and history as they were, so the attempt does
// not count; the next run or resume continues the unit from its last
// checkpoint. ok is false for any other error.
func infraResult(s agents.TaskState, err error) (r Result, ok bool) {
	ie, ok := agents.AsInfraError(err)
	if !ok {
		return Result{}, false
	}
	return Result{
		Status:       StatusInterrupted,
		Reason:       "setup problem, no retry used: " + oneLine(ie.Error()) + "; fix it, then run statgraph resume",
		RetryCount:   s.RetryCount,
		ErrorHistory: s.ErrorHistory,
	}, true
}
