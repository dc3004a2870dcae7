// Package drain asks running graphs to stop at their next step boundary
// with their work saved (LangGraph 1.1's requestDrain): a process being
// redeployed lets each run finish the super-step it is in, save that
// step's checkpoint, and return ErrDrained; running the thread again
// later (WithThread, with any input a continued thread accepts) continues
// from that checkpoint and ends as the uninterrupted run would have.
//
// The request travels in the context, so that it reaches every run
// started under it without a new option on package statgraph:
//
//	ctx, requestDrain := drain.WithRequest(ctx)
//	go func() { <-sigterm; requestDrain() }()
//	_, err := g.Invoke(ctx, in, statgraph.WithThread("t1"))
//	if errors.Is(err, drain.ErrDrained) { /* saved; run "t1" again later */ }
//
// Cancelling the context instead stops a run at once: the step in flight
// is abandoned and runs again on resume. A drain never abandons work.
//
// The package imports only the standard library; package statgraph reads
// the request with Requested.
package drain

import (
	"context"
	"errors"
	"sync/atomic"
)

// ErrDrained is wrapped by the error of a run that stopped because a drain
// was requested: the run finished the super-step in flight, saved its
// checkpoint (under every Durability mode) and ran no further step. Test
// for it with errors.Is. The state returned with it is the state after
// that step.
var ErrDrained = errors.New("statgraph: run drained")

type key struct{}

// flag is one drain switch, and those of the contexts it derives from.
type flag struct {
	on     atomic.Bool
	parent *flag
}

// WithRequest returns a copy of parent that carries a drain switch, and
// the function that requests the drain. Runs started with ctx (or a
// context derived from it) stop at their next step boundary once request
// has been called; a request on an outer WithRequest reaches contexts of
// inner ones too. request may be called any number of times, from any
// goroutine; it does not cancel ctx.
func WithRequest(parent context.Context) (ctx context.Context, request func()) {
	outer, _ := parent.Value(key{}).(*flag)
	s := &flag{parent: outer}
	return context.WithValue(parent, key{}, s), func() { s.on.Store(true) }
}

// Requested reports whether a drain was requested on ctx: false when ctx
// carries no switch (no WithRequest among its ancestors). It costs one
// ctx.Value lookup and an atomic load per enclosing switch.
func Requested(ctx context.Context) bool {
	s, _ := ctx.Value(key{}).(*flag)
	for ; s != nil; s = s.parent {
		if s.on.Load() {
			return true
		}
	}
	return false
}
