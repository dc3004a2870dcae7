package statgraph

import (
	"context"
	"slices"
)

// Try is one run of a node that a gate may retry.
type Try[S any] struct {
	Node    string
	Context int // the retry context, 1 for the node's first
	Try     int // 1 for the first run in its context
	Step    int // the super-step it ran in (0 for the run's input)
	// Output is what the node returned: its update (for Start, the input).
	Output S
	// Feedback is the aggregated feedback of the gate that sent this run
	// back, or "" when none did.
	Feedback string
}

// AttemptContext is what a node learns about its earlier attempts from
// Attempts. A retry context is a chain of runs of one node linked by gate
// retries; a run that follows no retry starts a new context.
type AttemptContext[S any] struct {
	Node    string
	Context int // the current retry context, 1 for the first
	Try     int // the attempt within the context, 1 for the first
	// Tries are the earlier runs in this context, oldest first, each with
	// the feedback that sent it back.
	Tries []Try[S]
	// All is every run of every retried node in the run so far, across
	// contexts, oldest first: the material for best-of-N.
	All []Try[S]
	// Hint is the feedback of the retry that caused this run, "" on a
	// first try.
	Hint string
}

// Attempts returns the attempt context of the running node. S must be the
// graph's state type. Only nodes that a gate retries (and Start) have
// attempts: for any other node Try is 1 and Tries empty, though All still
// lists the run's attempts. Outside a node, or with the wrong S, it returns
// the zero AttemptContext.
//
// The slices are copies and may be kept. Attempts is safe to call from
// nodes running in parallel.
func Attempts[S any](ctx context.Context) AttemptContext[S] {
	info, ok := ctx.Value(infoKey{}).(*nodeInfo)
	if !ok {
		return AttemptContext[S]{}
	}
	if info.gate == nil {
		return AttemptContext[S]{Node: info.node, Context: 1, Try: 1}
	}
	gs, ok := info.gate.gs.(*gateRun[S])
	if !ok {
		return AttemptContext[S]{}
	}
	ac := AttemptContext[S]{Node: info.node, Context: 1, Try: 1, All: gs.tries(func(*tryRecord[S]) bool { return true })}
	if s := gs.gg.tslot[info.gate.idx]; s >= 0 {
		ac.Context, ac.Try, ac.Hint = gs.upcoming(s)
		ac.Tries = gs.tries(func(t *tryRecord[S]) bool { return t.node == info.node && t.context == ac.Context })
	}
	return ac
}

// tries returns the recorded runs that keep accepts.
func (gs *gateRun[S]) tries(keep func(*tryRecord[S]) bool) []Try[S] {
	var out []Try[S]
	for i := range gs.history {
		t := &gs.history[i]
		if keep(t) {
			out = append(out, Try[S]{Node: t.node, Context: t.context, Try: t.try, Step: t.step, Output: t.out, Feedback: t.feedback})
		}
	}
	return out
}

// Result is the outcome of a run that WithResult reports: the final state
// with what the run's gates recorded.
type Result[S any] struct {
	State S
	// Warnings are the checks that failed without blocking (advisory
	// validators) and the gates skipped after escalation, oldest first.
	Warnings []Warning
	// Gates lists every gate decision, oldest first, including escalation
	// resets.
	Gates []GateOutcome
	// Attempts is every run of every retried node (AttemptContext.All).
	Attempts []Try[S]
}

func (r *run[S]) result(s S) Result[S] {
	res := Result[S]{State: s}
	if gs := r.gs; gs != nil {
		res.Warnings = slices.Clone(gs.warnings)
		res.Gates = gs.outcomes()
		res.Attempts = gs.tries(func(*tryRecord[S]) bool { return true })
	}
	return res
}

// outcomes returns a copy of the gate log.
func (gs *gateRun[S]) outcomes() []GateOutcome {
	out := make([]GateOutcome, len(gs.log))
	for i, o := range gs.log {
		out[i] = *o
	}
	return out
}
