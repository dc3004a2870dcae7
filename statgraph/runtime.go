package statgraph

import "context"

// Runtime is what a running node can learn about its run from its ctx
// (LangGraph's Runtime): read it with RuntimeOf. Outside a node every field
// is zero.
type Runtime struct {
	// Attempt is the node's attempt number: 1 for the first try, 2 for the
	// first retry under its RetryPolicy. 0 outside a node.
	Attempt int
	// RemainingSteps is how many more super-steps the run may take after
	// the current one before it ends with ErrStepLimit (0 in its last
	// allowed step), so that a looping node can wrap up in time. 0 outside
	// a node.
	RemainingSteps int
	// Fallback is, inside a node running as a WithFallback handler, the
	// error of the node that failed and led to it (several are joined with
	// errors.Join; after a resume from a checkpoint it is still a
	// *NodeError, whose Err keeps only the original's message). nil in any
	// other node and outside a node.
	Fallback error
}

// RuntimeOf returns the Runtime of the node running with ctx, or the zero
// Runtime when ctx is not (derived from) a node's context. It costs one
// ctx.Value lookup. Call it while the node runs: the engine reuses a node's
// context for its next attempt.
func RuntimeOf(ctx context.Context) Runtime {
	info, ok := ctx.Value(infoKey{}).(*nodeInfo)
	if !ok {
		return Runtime{}
	}
	rt := Runtime{Attempt: info.attempt, RemainingSteps: info.cfg.stepLimit - info.step}
	if info.extra != nil {
		rt.Fallback = info.extra.failure
	}
	return rt
}
