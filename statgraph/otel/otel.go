package otel

import (
	"context"
	"errors"
	"iter"
	"strings"

	global "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/statgraph/statgraph/statgraph"
)

// ScopeName is the instrumentation scope of the spans this package makes.
const ScopeName = "github.com/statgraph/statgraph/statgraph/otel"

// Attribute keys of the spans and span events this package makes.
const (
	KeyThread     = attribute.Key("statgraph.thread")
	KeyNode       = attribute.Key("statgraph.node")
	KeyStep       = attribute.Key("statgraph.step")
	KeyAttempt    = attribute.Key("statgraph.attempt")
	KeySteps      = attribute.Key("statgraph.steps")
	KeyRouteKey   = attribute.Key("statgraph.route.key")
	KeyRouteTo    = attribute.Key("statgraph.route.to")
	KeyDelay      = attribute.Key("statgraph.retry.delay_ms")
	KeyInterrupts = attribute.Key("statgraph.interrupts")
)

// Tracer says how runs are traced. The zero value traces through the
// global TracerProvider, names run spans "invoke" and makes each node
// attempt's span a child of the span in the node's ctx (the run's span
// under Stream and Wrap). A Tracer is read-only once in use and safe for
// concurrent use by any number of runs.
type Tracer struct {
	// Provider makes the spans; nil means otel.GetTracerProvider(), which
	// makes no spans until an SDK is installed.
	Provider trace.TracerProvider
	// RunName names each run's span; "" means "invoke".
	RunName string
	// Parent, when not nil, returns the ctx whose span is to be the parent
	// of the span of an attempt of node that starts with ctx (e.g. a span
	// of your own grouping several nodes); it is called on the attempt's
	// goroutine and must be safe for concurrent use. nil means ctx itself.
	Parent func(ctx context.Context, node string) context.Context
}

func (t *Tracer) tracer() trace.Tracer {
	p := t.Provider
	if p == nil {
		p = global.GetTracerProvider()
	}
	return p.Tracer(ScopeName)
}

// NodeHook returns a run option that makes a span of every node attempt,
// named after the node, with the node, step and attempt (and thread, if
// given) as attributes. A failed attempt's span has status Error and the
// error recorded; an attempt that paused at an interrupt gets an
// "interrupt" event instead. Pass it to Invoke, Stream or Resume when you
// make the run's span yourself; Stream and Wrap pass it for you.
func (t *Tracer) NodeHook(thread string) statgraph.RunOption {
	return t.nodeHook(&thread)
}

// nodeHook is NodeHook with the thread read as each attempt starts: Wrap
// learns it from the run's first event, which happens before any node
// starts.
func (t *Tracer) nodeHook(threadp *string) statgraph.RunOption {
	tr := t.tracer()
	parent := t.Parent
	return statgraph.WithNodeHook(func(ctx context.Context, node string, step, attempt int) (context.Context, func(error)) {
		pctx := ctx
		if parent != nil {
			pctx = parent(ctx, node)
		}
		_, span := tr.Start(pctx, node)
		if !span.IsRecording() {
			// Not sampled, or no SDK installed: the node keeps its ctx,
			// and no closure is made.
			return ctx, nil
		}
		span.SetAttributes(KeyNode.String(node), KeyStep.Int(step), KeyAttempt.Int(attempt))
		if thread := *threadp; thread != "" {
			span.SetAttributes(KeyThread.String(thread))
		}
		// The node keeps its own ctx (with its deadline and values) and
		// gets the attempt's span in it.
		return trace.ContextWithSpan(ctx, span), func(err error) {
			switch {
			case err == nil:
			case errors.Is(err, statgraph.ErrInterrupted):
				span.AddEvent("interrupt")
			default:
				span.RecordError(err)
				span.SetStatus(codes.Error, firstLine(err.Error()))
			}
			span.End()
		}
	})
}

// Stream is g.Stream traced: the run gets a span (a child of the span in
// ctx, if any), each node attempt a span under it, and the run's other
// events are recorded on the run's span (see Record). The events are
// yielded unchanged. Stopping the loop early ends the run's span as
// cancelled.
func Stream[S any](ctx context.Context, t *Tracer, g *statgraph.Graph[S], input S, opts ...statgraph.RunOption) iter.Seq2[statgraph.Event[S], error] {
	return Wrap(ctx, t, func(ctx context.Context, hook statgraph.RunOption) iter.Seq2[statgraph.Event[S], error] {
		return g.Stream(ctx, input, append(opts[:len(opts):len(opts)], hook)...)
	})
}

// Invoke is g.Invoke traced as Stream traces it; it returns the final state
// and the run's error as Invoke does.
func Invoke[S any](ctx context.Context, t *Tracer, g *statgraph.Graph[S], input S, opts ...statgraph.RunOption) (S, error) {
	var out S
	var err error
	for ev, e := range Stream(ctx, t, g, input, opts...) {
		if ev.Kind == statgraph.EventRunEnd {
			out, err = ev.State, e
		}
	}
	return out, err
}

// Wrap traces the run that start begins (a g.Stream call made elsewhere):
// start is called once with ctx carrying the run's span and the node hook
// to pass as a run option. The run's thread, from its first event, is
// recorded on every span. When the run's span is not recorded (no SDK
// installed, or the run not sampled) no node spans are made either.
func Wrap[S any](ctx context.Context, t *Tracer, start func(ctx context.Context, hook statgraph.RunOption) iter.Seq2[statgraph.Event[S], error]) iter.Seq2[statgraph.Event[S], error] {
	return func(yield func(statgraph.Event[S], error) bool) {
		name := t.RunName
		if name == "" {
			name = "invoke"
		}
		ctx, span := t.tracer().Start(ctx, name)
		var thread string
		ended := false
		defer func() {
			if !ended {
				span.SetStatus(codes.Error, "stopped by the caller before the run ended")
				span.End()
			}
		}()
		hook := statgraph.WithNodeHook(nil)
		if span.IsRecording() {
			// A run whose span is not recorded (no SDK installed, or not
			// sampled) has its nodes' spans dropped too: it pays for none.
			hook = t.nodeHook(&thread)
		}
		for ev, err := range start(ctx, hook) {
			if ev.Kind == statgraph.EventRunStart && ev.Thread != "" {
				thread = ev.Thread
				span.SetAttributes(KeyThread.String(thread))
			}
			Record(span, ev)
			if ev.Kind == statgraph.EventRunEnd {
				ended = true
				span.End()
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// Record adds what ev reports to span: a retry, a route
// or an interrupt as a span event; the end of a run as the span's status
// (Error with the error recorded when the run failed; an interrupted run is
// not an error) and its step count. Other kinds are ignored; node attempts
// are spans of their own (NodeHook). It does not end the span.
func Record[S any](span trace.Span, ev statgraph.Event[S]) {
	if !span.IsRecording() {
		return
	}
	node := ev.Node
	if ev.Namespace != "" && node != "" {
		node = ev.Namespace + "|" + node
	}
	switch ev.Kind {
	case statgraph.EventRetry:
		span.AddEvent("retry", trace.WithAttributes(KeyNode.String(node), KeyStep.Int(ev.Step), KeyAttempt.Int(ev.Attempt),
			KeyDelay.Int64(ev.Delay.Milliseconds()), attribute.String("exception.message", firstLine(errString(ev.Err)))))
	case statgraph.EventRoute:
		span.AddEvent("route", trace.WithAttributes(KeyNode.String(node), KeyStep.Int(ev.Step), KeyRouteKey.String(ev.Key), KeyRouteTo.String(ev.To)))
	case statgraph.EventInterrupt:
		ids := make([]string, len(ev.Interrupts))
		for i, in := range ev.Interrupts {
			ids[i] = in.ID
		}
		span.AddEvent("interrupt", trace.WithAttributes(KeyStep.Int(ev.Step), KeyInterrupts.StringSlice(ids)))
	case statgraph.EventRunEnd:
		span.SetAttributes(KeySteps.Int(ev.Step))
		if ev.Err != nil && !errors.Is(ev.Err, statgraph.ErrInterrupted) {
			span.RecordError(ev.Err)
			span.SetStatus(codes.Error, firstLine(ev.Err.Error()))
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// firstLine shortens s to its first line and at most 200 bytes, for a
// span's status description.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}
