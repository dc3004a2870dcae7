package statgraph

import "context"

// WithNodeHook calls hook as each attempt of a node starts, on the
// goroutine that runs the attempt, with the node's ctx, its name (a
// subgraph's node is named by its path, "outer|inner"), the step and the
// attempt number. The attempt runs with the ctx hook returns (derive it from
// the ctx given, so that the node still finds its run through it), and the
// returned function, if not nil, is called once the attempt returns, on the
// same goroutine, with its error (a *NodeError, one wrapping ErrInterrupted
// when the node paused, or nil).
//
// It is the seam for tracing (package statgraph/otel makes a span of each
// attempt, which the node's own spans then nest under): hook must be safe
// for concurrent use, since the nodes of a step run in parallel, and should
// return quickly. A panic in hook is not recovered. Nodes restored from a
// checkpoint are not reported.
// Subgraphs inherit the hook. A nil hook is no hook: a run without one pays
// nothing for the seam.
func WithNodeHook(hook func(ctx context.Context, node string, step, attempt int) (context.Context, func(error))) RunOption {
	return func(c *runConfig) { c.hook = hook }
}

// callHooked runs one attempt of n with the run's node hook around it.
//
//go:noinline
func (r *run[S]) callHooked(sl *slot[S], n *node[S], in S, attempt int) (S, error) {
	name := n.name
	if r.cfg.ns != "" {
		name = r.cfg.ns + nsSep + name
	}
	ctx, end := r.cfg.hook(&sl.nctx, name, r.step, attempt)
	if ctx == nil {
		ctx = &sl.nctx
	}
	out, err := r.call(ctx, n, in, attempt)
	if end != nil {
		end(err)
	}
	return out, err
}
