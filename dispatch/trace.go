package dispatch

// This file makes the orchestrator's trace spans when Dispatcher.Tracer is
// set: statgraph run → task → attempt → node (planner, executor, verifier,
// failed), and under a node the model calls, checks and agent CLI runs that
// packages agents/llm, verifier and agents report through internal/obs.

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/internal/obs"
	"github.com/statgraph/statgraph/statgraph"
	sgotel "github.com/statgraph/statgraph/statgraph/otel"
	"github.com/statgraph/statgraph/tasks"
)

// scopeName is the instrumentation scope of the orchestrator's spans.
const scopeName = "github.com/statgraph/statgraph/tasks"

// startRunSpan starts the span of a whole run and puts the hook that
// packages report their operations through (internal/obs) in ctx. Without
// a Tracer it returns ctx and an end that does nothing.
func (d *Dispatcher) startRunSpan(ctx context.Context) (context.Context, func(Summary, error)) {
	if d.Tracer == nil {
		return ctx, func(Summary, error) {}
	}
	ctx, span := d.Tracer.Tracer(scopeName).Start(ctx, "statgraph run", trace.WithAttributes(
		attribute.String("statgraph.tasks_file", d.File.Path), attribute.Int("statgraph.jobs", d.Jobs)))
	ctx = obs.With(ctx, obsHook(d.Tracer))
	return ctx, func(s Summary, err error) {
		counts := map[string]int{}
		for _, u := range s.Units {
			counts[u.Status]++
		}
		for status, n := range counts {
			span.SetAttributes(attribute.Int("statgraph.tasks."+status, n))
		}
		span.SetAttributes(otelAttrs(llm.UsageAttrs(s.Usage()))...)
		endSpan(span, err)
	}
}

// unitTrace is the spans of one unit: the task's and, while one runs, its
// current attempt's. The graph's node spans hang under the attempt (the
// planner's, before any attempt, under the task). Its methods are called
// from the goroutine running the unit's graph; mu also covers nodes that a
// graph might run in parallel.
type unitTrace struct {
	tr   trace.Tracer
	tp   trace.TracerProvider
	ctx  context.Context // the task span's
	task trace.Span
	mu   sync.Mutex // guards attempt and actx
	// attempt is the current attempt's span, actx its ctx; nil before the
	// first attempt.
	attempt trace.Span
	actx    context.Context
}

// startUnitSpan starts unit id's task span, or returns nil without a
// Tracer.
func (d *Dispatcher) startUnitSpan(ctx context.Context, id string, t tasks.Task) (context.Context, *unitTrace) {
	if d.Tracer == nil {
		return ctx, nil
	}
	if !obs.Enabled(ctx) { // RunOne: no run span above
		ctx = obs.With(ctx, obsHook(d.Tracer))
	}
	tr := d.Tracer.Tracer(scopeName)
	ctx, span := tr.Start(ctx, "task "+id, trace.WithAttributes(
		attribute.String("statgraph.task.id", id), attribute.String("statgraph.task.title", t.Title),
		attribute.Int("statgraph.task.max_attempts", t.Retries())))
	return ctx, &unitTrace{tr: tr, tp: d.Tracer, ctx: ctx, task: span}
}

// nodeHook returns the run option that makes the graph's node spans, or
// none without a trace.
func (u *unitTrace) nodeHook(thread string) []statgraph.RunOption {
	if u == nil {
		return nil
	}
	t := &sgotel.Tracer{Provider: u.tp, Parent: func(ctx context.Context, node string) context.Context {
		u.mu.Lock()
		defer u.mu.Unlock()
		if u.actx != nil && node != agents.NodePlanner {
			return u.actx
		}
		return u.ctx
	}}
	return []statgraph.RunOption{t.NodeHook(thread)}
}

// event records a graph event: an executor starting begins a new attempt
// span (ending the previous one); routes, retries and interrupts become
// events of the current attempt's span, or of the task's.
func (u *unitTrace) event(ev statgraph.Event[agents.TaskState], s agents.TaskState) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if ev.Kind == statgraph.EventNodeStart && ev.Node == agents.NodeExecutor {
		if u.attempt != nil {
			if len(s.Attempts) > 0 { // the attempt that ends: what it spent
				u.attempt.SetAttributes(otelAttrs(llm.UsageAttrs(s.Attempts[len(s.Attempts)-1].Usage))...)
			}
			u.attempt.End()
		}
		n := s.RetryCount + 1
		u.actx, u.attempt = u.tr.Start(u.ctx, "attempt", trace.WithAttributes(attribute.Int("statgraph.attempt", n)))
		return
	}
	span := u.task
	if u.attempt != nil {
		span = u.attempt
	}
	if ev.Kind != statgraph.EventRunEnd { // the task span reports the end
		sgotel.Record(span, ev)
	}
}

// end ends the unit's spans with its outcome.
func (u *unitTrace) end(res UnitResult) {
	if u == nil {
		return
	}
	u.mu.Lock()
	if u.attempt != nil {
		u.attempt.End()
		u.attempt, u.actx = nil, nil
	}
	u.mu.Unlock()
	u.task.SetAttributes(attribute.String("statgraph.task.status", res.Status), attribute.Int("statgraph.task.attempts", res.Attempts),
		attribute.Int("gen_ai.usage.total_tokens", res.Tokens))
	u.task.SetAttributes(otelAttrs(llm.UsageAttrs(res.Usage))...)
	if res.Reason != "" {
		u.task.SetAttributes(attribute.String("statgraph.task.reason", res.Reason))
	}
	if res.Status == tasks.StatusFailed {
		u.task.SetStatus(codes.Error, res.Reason)
	}
	u.task.End()
}

// obsHook makes an OpenTelemetry span of each operation reported through
// internal/obs, a child of the span in the operation's ctx.
func obsHook(tp trace.TracerProvider) obs.Hook {
	tr := tp.Tracer(scopeName)
	return func(ctx context.Context, name string, attrs []obs.Attr) (context.Context, obs.End) {
		opts := []trace.SpanStartOption{trace.WithAttributes(otelAttrs(attrs)...)}
		if len(attrs) > 0 && attrs[0].Key == "gen_ai.operation.name" {
			// A model call is a request to a server (GenAI conventions).
			opts = append(opts, trace.WithSpanKind(trace.SpanKindClient))
		}
		ctx, span := tr.Start(ctx, name, opts...)
		return ctx, func(err error, attrs ...obs.Attr) {
			span.SetAttributes(otelAttrs(attrs)...)
			endSpan(span, err)
		}
	}
}

// endSpan ends span, in Error with err recorded when err is not nil.
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, oneLine(err.Error()))
	}
	span.End()
}

func otelAttrs(attrs []obs.Attr) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, len(attrs))
	for _, a := range attrs {
		k := attribute.Key(a.Key)
		switch v := a.Value.(type) {
		case string:
			out = append(out, k.String(v))
		case int:
			out = append(out, k.Int(v))
		case int64:
			out = append(out, k.Int64(v))
		case float64:
			out = append(out, k.Float64(v))
		case bool:
			out = append(out, k.Bool(v))
		case []string:
			out = append(out, k.StringSlice(v))
		}
	}
	return out
}
