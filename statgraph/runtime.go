package statgraph

import (
	"context"
	"slices"

	"github.com/statgraph/statgraph/statgraph/store"
)

// Runtime is what a running node can learn about its run from its ctx
// (LangGraph's Runtime): read it with RuntimeOf; routers and fan-outs read
// it too. Outside a node, router or fan-out every field is zero.
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
	// Store is the graph's long-term store (WithStore; a subgraph without
	// one of its own gets its parent's), nil when it has none: what the
	// graph keeps across threads and runs (LangGraph's runtime.store).
	Store store.Store
	// Write streams v from inside the running node as an EventCustom
	// whose Custom field holds v (LangGraph's runtime.stream_writer):
	// progress, tokens. It does nothing when the run's Stream did not ask
	// for EventCustom with WithEvents, or in a router. Call it only from
	// the node's own goroutine and before the node returns. A node running
	// alone in its step has its values yielded at once; in a step where
	// several nodes run in parallel they are yielded at the step's
	// barrier, before the node's EventNodeEnd. nil outside a node.
	Write func(v any)
}

// RuntimeOf returns the Runtime of the node running with ctx, or the zero
// Runtime when ctx is not (derived from) a node's context. A router
// (AddConditionalEdges, AddRoutes) and a fan-out (AddSends) get the
// RemainingSteps of the step of the node they follow, and Attempt 0. It
// costs one ctx.Value lookup (and, when the Stream asked for EventCustom,
// one closure for Write). Call it while the node or router runs: the
// engine reuses their contexts.
func RuntimeOf(ctx context.Context) Runtime {
	info, ok := ctx.Value(infoKey{}).(*nodeInfo)
	if !ok {
		return Runtime{}
	}
	rt := Runtime{Attempt: info.attempt, RemainingSteps: info.cfg.stepLimit - info.step, Store: info.cfg.store, Write: noWrite}
	if info.extra != nil {
		rt.Fallback = info.extra.failure
	}
	if info.sink != nil && slices.Contains(info.cfg.kinds, EventCustom) {
		sink, node, step := info.sink, info.node, info.step
		rt.Write = func(v any) {
			sink(Event[none]{Kind: EventCustom, Node: node, Step: step, Custom: v})
		}
	}
	return rt
}

// noWrite is Runtime.Write when nobody listens.
func noWrite(any) {}

// routerCtx returns the context of a router or fan-out that follows node n:
// the run's context with a nodeInfo for RuntimeOf.
func (r *run[S]) routerCtx(n *node[S]) context.Context {
	r.rctx.Context = r.ctx
	r.rctx.info = nodeInfo{node: n.name, step: r.step, cfg: &r.cfg}
	return &r.rctx
}
