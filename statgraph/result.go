package statgraph

import "errors"

// Result is the outcome of a run that WithResult reports.
type Result[S any] struct {
	// State is the final state, or what the run reached when it failed.
	State S
	// Interrupts are the pauses a run that stopped at an interrupt waits
	// on (its error then wraps ErrInterrupted); nil otherwise. Answer them
	// with WithResume: the value itself for one, a ResumeMap by ID for
	// several.
	Interrupts []Interruption
}

func (r *run[S]) result(s S, err error) Result[S] {
	res := Result[S]{State: s}
	if ie := (*interruptedError)(nil); errors.As(err, &ie) {
		res.Interrupts = ie.pending
	}
	return res
}
