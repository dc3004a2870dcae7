package otel_test

import (
	"context"
	"errors"
	"iter"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/statgraph/statgraph/statgraph"
	sgotel "github.com/statgraph/statgraph/statgraph/otel"
)

type st struct {
	Log []string
}

func appendLog(a, b st) st { return st{Log: append(slices.Clone(a.Log), b.Log...)} }

func recorder(t *testing.T) (*sgotel.Tracer, *tracetest.SpanRecorder) {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	return &sgotel.Tracer{Provider: tp}, sr
}

func attr(s sdktrace.ReadOnlySpan, k attribute.Key) attribute.Value {
	for _, kv := range s.Attributes() {
		if kv.Key == k {
			return kv.Value
		}
	}
	return attribute.Value{}
}

func byName(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

func eventNamed(s sdktrace.ReadOnlySpan, name string) (sdktrace.Event, bool) {
	for _, e := range s.Events() {
		if e.Name == name {
			return e, true
		}
	}
	return sdktrace.Event{}, false
}

func eventAttr(e sdktrace.Event, k attribute.Key) attribute.Value {
	for _, kv := range e.Attributes {
		if kv.Key == k {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// TestStreamSpans runs fetch (fails once, retried) -> route -> split ->
// a, b in parallel, where a makes a span of its own, and checks the tree:
// one run span, a span per node attempt under it with node, step, attempt
// and thread, the failed attempt in Error, the retry and the route as
// events of the run span, and a's own span under a's.
func TestStreamSpans(t *testing.T) {
	tr, sr := recorder(t)
	fetches := 0
	g, err := statgraph.New[st]().SetReducer(appendLog).
		AddNode("fetch", func(ctx context.Context, s st) (st, error) {
			fetches++
			if fetches == 1 {
				return st{}, errors.New("connection reset")
			}
			return st{Log: []string{"fetch"}}, nil
		}, statgraph.WithRetry(statgraph.RetryPolicy{InitialInterval: time.Millisecond})).
		AddNode("split", func(ctx context.Context, s st) (st, error) { return st{}, nil }).
		AddNode("a", func(ctx context.Context, s st) (st, error) {
			_, inner := trace.SpanFromContext(ctx).TracerProvider().Tracer("test").Start(ctx, "inner")
			inner.End()
			return st{Log: []string{"a"}}, nil
		}).
		AddNode("b", func(ctx context.Context, s st) (st, error) { return st{Log: []string{"b"}}, nil }).
		AddEdge(statgraph.Start, "fetch").
		AddConditionalEdges("fetch", func(ctx context.Context, s st) string { return "go" }, map[string]string{"go": "split"}).
		AddEdge("split", "a").AddEdge("split", "b").
		AddEdge("a", statgraph.End).AddEdge("b", statgraph.End).
		Compile(statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(false)))
	require.NoError(t, err)

	out, err := sgotel.Invoke(context.Background(), tr, g, st{}, statgraph.WithThread("t1"))
	require.NoError(t, err)
	require.Equal(t, []string{"fetch", "a", "b"}, out.Log)

	spans := sr.Ended()
	runs := byName(spans, "invoke")
	require.Len(t, runs, 1)
	run := runs[0]
	require.Equal(t, "t1", attr(run, sgotel.KeyThread).AsString())
	require.Equal(t, codes.Unset, run.Status().Code)

	fetch := byName(spans, "fetch")
	require.Len(t, fetch, 2, "one span per attempt")
	for i, s := range fetch {
		require.Equal(t, run.SpanContext().SpanID(), s.Parent().SpanID(), "fetch attempt %d's parent", i+1)
		require.Equal(t, run.SpanContext().TraceID(), s.SpanContext().TraceID())
		require.Equal(t, int64(i+1), attr(s, sgotel.KeyAttempt).AsInt64())
		require.Equal(t, int64(1), attr(s, sgotel.KeyStep).AsInt64())
		require.Equal(t, "t1", attr(s, sgotel.KeyThread).AsString())
	}
	require.Equal(t, codes.Error, fetch[0].Status().Code)
	require.Contains(t, fetch[0].Status().Description, "connection reset")
	require.Equal(t, codes.Unset, fetch[1].Status().Code)

	retry, ok := eventNamed(run, "retry")
	require.True(t, ok, "the run's span has a retry event")
	require.Equal(t, "fetch", eventAttr(retry, sgotel.KeyNode).AsString())
	require.Equal(t, int64(1), eventAttr(retry, sgotel.KeyAttempt).AsInt64())
	route, ok := eventNamed(run, "route")
	require.True(t, ok, "the run's span has a route event")
	require.Equal(t, "go", eventAttr(route, sgotel.KeyRouteKey).AsString())
	require.Equal(t, "split", eventAttr(route, sgotel.KeyRouteTo).AsString())

	a, b := byName(spans, "a"), byName(spans, "b")
	require.Len(t, a, 1)
	require.Len(t, b, 1)
	require.Equal(t, int64(3), attr(a[0], sgotel.KeyStep).AsInt64())
	require.Equal(t, run.SpanContext().SpanID(), b[0].Parent().SpanID())
	inner := byName(spans, "inner")
	require.Len(t, inner, 1)
	require.Equal(t, a[0].SpanContext().SpanID(), inner[0].Parent().SpanID(), "a node's own span nests under its attempt")
}

// TestFailedRunAndInterrupt: a run that fails has its span in Error; a run
// that pauses at an interrupt is not an error and records the interrupt.
func TestFailedRunAndInterrupt(t *testing.T) {
	tr, sr := recorder(t)
	boom := errors.New("boom")
	g, err := statgraph.New[st]().
		AddNode("ask", func(ctx context.Context, s st) (st, error) {
			answer, err := statgraph.Interrupt[string](ctx, "continue?")
			if err != nil {
				return s, err
			}
			if answer == "fail" {
				return s, boom
			}
			return s, nil
		}).
		AddEdge(statgraph.Start, "ask").AddEdge("ask", statgraph.End).
		Compile(statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(false)))
	require.NoError(t, err)
	ctx := context.Background()

	_, err = sgotel.Invoke(ctx, tr, g, st{}, statgraph.WithThread("t2"))
	require.ErrorIs(t, err, statgraph.ErrInterrupted)
	spans := sr.Ended()
	require.Len(t, byName(spans, "invoke"), 1)
	run := byName(spans, "invoke")[0]
	require.Equal(t, codes.Unset, run.Status().Code, "a pause is not an error")
	ev, ok := eventNamed(run, "interrupt")
	require.True(t, ok)
	require.Len(t, eventAttr(ev, sgotel.KeyInterrupts).AsStringSlice(), 1)
	ask := byName(spans, "ask")
	require.Len(t, ask, 1)
	require.Equal(t, codes.Unset, ask[0].Status().Code)
	_, ok = eventNamed(ask[0], "interrupt")
	require.True(t, ok, "the paused attempt's span records the interrupt")

	for ev, err := range sgotel.Wrap(ctx, tr, func(ctx context.Context, hook statgraph.RunOption) iter.Seq2[statgraph.Event[st], error] {
		return g.Stream(ctx, st{}, statgraph.WithThread("t2"), statgraph.WithResume("fail"), hook)
	}) {
		if ev.Kind == statgraph.EventRunEnd {
			require.ErrorIs(t, err, boom)
		}
	}
	spans = sr.Ended()
	runs := byName(spans, "invoke")
	require.Len(t, runs, 2)
	require.Equal(t, codes.Error, runs[1].Status().Code)
	require.Contains(t, runs[1].Status().Description, "boom")
	require.Equal(t, "t2", attr(runs[1], sgotel.KeyThread).AsString())
	ask = byName(spans, "ask")
	require.Len(t, ask, 2)
	require.Equal(t, codes.Error, ask[1].Status().Code)
	require.Equal(t, runs[1].SpanContext().SpanID(), ask[1].Parent().SpanID())
}

// TestBreakEndsRunSpan: a caller that stops the loop early still gets the
// run's span ended, marked as stopped.
func TestBreakEndsRunSpan(t *testing.T) {
	tr, sr := recorder(t)
	g, err := statgraph.New[st]().
		AddNode("n", func(ctx context.Context, s st) (st, error) { return s, nil }).
		AddEdge(statgraph.Start, "n").AddEdge("n", statgraph.End).Compile()
	require.NoError(t, err)
	for range sgotel.Stream(context.Background(), tr, g, st{}) {
		break
	}
	runs := byName(sr.Ended(), "invoke")
	require.Len(t, runs, 1)
	require.Equal(t, codes.Error, runs[0].Status().Code)
}
