package statgraph

import (
	"context"
	"iter"
)

// Stream runs the graph like Invoke and yields its events as they happen.
// The last event is EventRunEnd, yielded together with the run's error (nil
// on success). Breaking out of the loop cancels the run; Stream returns only
// after the run has stopped, leaving no goroutine behind (but a node
// abandoned at its WithTimeout deadline, as for Invoke).
//
// Events are yielded from the goroutine that ranges over the sequence. In a
// step where several nodes run in parallel, their retry and end events are
// yielded together at the step's barrier, in node-name order.
func (g *Graph[S]) Stream(ctx context.Context, input S, opts ...RunOption) iter.Seq2[Event[S], error] {
	return g.stream(ctx, input, opts)
}

func (g *Graph[S]) stream(ctx context.Context, input S, opts []RunOption) iter.Seq2[Event[S], error] {
	return func(yield func(Event[S], error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		r := g.newRun(opts)
		trace := r.emit
		stopped := false
		r.emit = func(ev Event[S]) bool {
			if trace != nil {
				trace(ev)
			}
			if stopped {
				return false
			}
			if !r.cfg.wants(ev.Kind) {
				return true
			}
			var err error
			if ev.Kind == EventRunEnd {
				err = ev.Err
			}
			if !yield(ev, err) {
				stopped = true
				cancel()
				return false
			}
			return true
		}
		if r.cfg.call == nil {
			r.start(ctx, input, nil) //nolint:errcheck // the error was yielded with EventRunEnd
			return
		}
		r.invoke(ctx, input) //nolint:errcheck // the error was yielded with EventRunEnd
	}
}
