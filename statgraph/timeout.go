package statgraph

import (
	"context"
	"fmt"
	"time"
)

// callBounded runs one attempt of n, which has a WithTimeout, on a
// goroutine of its own, and returns soon after its deadline (or after ctx
// is done; see graceAfter) whether or not the node has returned: a node
// that ignores its ctx is abandoned rather
// than holding up the step (issue 23; LangGraph's step timeout does not
// wait for the node either). The goroutine ends when the node returns; its
// result is then dropped, and a subgraph run inside it writes no checkpoint
// once it is abandoned (lease.go).
func callBounded[S any](ctx context.Context, n *node[S], attempt int, in S) (S, error) {
	ctx, cancel := context.WithTimeout(ctx, n.timeout)
	defer cancel()
	ctx, l := withLease(ctx)
	// The attempt gets its own copy of the node's info: the engine reuses
	// the slot's for the next attempt and step, while an abandoned node may
	// still read it (RuntimeOf) or write to it (Interrupt, a Command). Its
	// writes are copied back when it returns in time; its events go through
	// the lease, so none arrives once it is abandoned.
	info, _ := ctx.Value(infoKey{}).(*nodeInfo)
	if info != nil {
		own := &nodeCtx{Context: ctx, info: *info}
		if info.extra != nil {
			extra := *info.extra
			own.info.extra = &extra
		}
		if sink := info.sink; sink != nil {
			own.info.sink = func(ev Event[none]) bool {
				ok := false
				l.hold(func() error { ok = sink(ev); return nil })
				return ok
			}
		}
		ctx = own
		defer func() {
			if ended := l.isOver(); !ended {
				sink, extra := info.sink, info.extra
				*info = own.info
				info.sink, info.extra = sink, extra
				if extra != nil {
					*extra = *own.info.extra
				}
			}
		}()
	}
	type result struct {
		out S
		err error
	}
	done := make(chan result, 1) // buffered: an abandoned node's send never blocks
	go func() {
		var res result
		defer func() {
			if p := recover(); p != nil {
				res.err = panicError(n.name, attempt, p)
			}
			done <- res
		}()
		res.out, res.err = n.fn(ctx, in)
	}()
	select {
	case res := <-done:
		if res.err == nil && ctx.Err() != nil {
			// The node ignored its ctx but returned as the deadline passed.
			res.err = lateError(n, ctx.Err())
		}
		return res.out, res.err
	case <-ctx.Done():
	}
	// A node that heeds its ctx returns now: wait for it a little (so its
	// writes happen before the next attempt's), then abandon it.
	grace := time.NewTimer(graceAfter(n.timeout))
	defer grace.Stop()
	select {
	case res := <-done:
		if res.err == nil {
			res.err = lateError(n, ctx.Err())
		}
		return res.out, res.err
	case <-grace.C:
		l.end() // a subgraph inside writes no more checkpoints
		var zero S
		return zero, lateError(n, ctx.Err())
	}
}

// graceAfter is how long a node is still waited for after its deadline
// d: a tenth of d, between 1ms and 1s.
func graceAfter(d time.Duration) time.Duration {
	return min(max(d/10, time.Millisecond), time.Second)
}

//go:noinline
func lateError[S any](n *node[S], err error) error {
	return fmt.Errorf("did not return by its WithTimeout(%v) deadline; it is no longer waited for and any result it returns is dropped: %w", n.timeout, err)
}
