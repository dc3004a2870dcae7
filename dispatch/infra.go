package dispatch

import (
	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/tasks"
)

// infraResult returns the result of unit t stopped by an infrastructure
// error (see agents.InfraError): interrupted, with the reason and what to
// do, and its retry count and history as they were, so the attempt does
// not count; the next run or resume continues the unit from its last
// checkpoint. s is the unit's state when the error came: the zero state
// when the error came before the graph reported any (while preparing, or
// at once on a resumed run), so t's values as loaded count when s has
// fewer. ok is false for any other error.
func infraResult(t tasks.Task, s agents.TaskState, err error) (r tasks.Outcome, ok bool) {
	ie, ok := agents.AsInfraError(err)
	if !ok {
		return tasks.Outcome{}, false
	}
	r = tasks.Outcome{
		Status:       tasks.StatusInterrupted,
		Reason:       "setup problem, no retry used: " + oneLine(ie.Error()) + "; fix it, then run statgraph resume",
		RetryCount:   max(s.RetryCount, t.RetryCount),
		ErrorHistory: s.ErrorHistory,
	}
	if len(t.ErrorHistory) > len(s.ErrorHistory) {
		r.ErrorHistory = t.ErrorHistory
	}
	return r, true
}
