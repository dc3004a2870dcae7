package otel_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/statgraph/statgraph/statgraph"
	sgotel "github.com/statgraph/statgraph/statgraph/otel"
)

// benchState and benchW1 are workload W1 of statgraph/bench_test.go (the
// retry loop planner -> executor <-> verifier, then failed), repeated here
// because test files of another package cannot be imported.
type benchState struct {
	RetryCount, MaxRetries int
	Passed                 bool
	ErrorHistory           []string
}

func benchW1(b *testing.B) *statgraph.Graph[benchState] {
	g, err := statgraph.New[benchState]().
		AddNode("planner", func(_ context.Context, s benchState) (benchState, error) {
			s.RetryCount, s.Passed = 0, false
			return s, nil
		}).
		AddNode("executor", func(_ context.Context, s benchState) (benchState, error) {
			s.RetryCount++
			return s, nil
		}).
		AddNode("verifier", func(_ context.Context, s benchState) (benchState, error) {
			s.Passed = false
			s.ErrorHistory = append(s.ErrorHistory, "verify failed")
			return s, nil
		}).
		AddNode("failed", func(_ context.Context, s benchState) (benchState, error) {
			s.ErrorHistory = append(s.ErrorHistory, "max retries exceeded")
			return s, nil
		}).
		AddEdge(statgraph.Start, "planner").AddEdge("planner", "executor").AddEdge("executor", "verifier").
		AddConditionalEdges("verifier", func(_ context.Context, s benchState) string {
			switch {
			case s.Passed:
				return "done"
			case s.RetryCount >= s.MaxRetries:
				return "failed"
			}
			return "retry"
		}, map[string]string{"done": statgraph.End, "failed": "failed", "retry": "executor"}).
		AddEdge("failed", statgraph.End).Compile()
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// BenchmarkW1Tracing runs W1 (1,000 retries, 2,002 node executions per
// invoke) six ways in one run: plain Invoke (no tracing: the library as
// every untraced caller uses it); Invoke with a node hook that does
// nothing (the seam's own cost); g.Stream consumed to its end (what the
// adapter runs on, without it); through the adapter with the global
// TracerProvider and no SDK installed (a program that wired the adapter
// but configured no tracing); and through the adapter with the SDK, every
// span sampled, batched to an exporter that discards them, or kept in
// memory by a SpanRecorder. ns/node is per node execution.
func BenchmarkW1Tracing(b *testing.B) {
	const n = 1000
	g := benchW1(b)
	noExporter := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	defer noExporter.Shutdown(context.Background())
	noHook := statgraph.WithNodeHook(func(ctx context.Context, _ string, _, _ int) (context.Context, func(error)) { return ctx, nil })
	in := benchState{MaxRetries: n}
	limit := statgraph.WithStepLimit(2*n + 10)
	cases := []struct {
		name   string
		invoke func(ctx context.Context) (benchState, error)
	}{
		{"plain", func(ctx context.Context) (benchState, error) { return g.Invoke(ctx, in, limit) }},
		{"nop-hook", func(ctx context.Context) (benchState, error) { return g.Invoke(ctx, in, limit, noHook) }},
		{"stream", func(ctx context.Context) (benchState, error) {
			var out benchState
			var err error
			for ev, e := range g.Stream(ctx, in, limit) {
				if ev.Kind == statgraph.EventRunEnd {
					out, err = ev.State, e
				}
			}
			return out, err
		}},
		{"adapter-no-sdk", func(ctx context.Context) (benchState, error) {
			return sgotel.Invoke(ctx, &sgotel.Tracer{}, g, in, limit)
		}},
		{"adapter-sdk-discard", func(ctx context.Context) (benchState, error) {
			return sgotel.Invoke(ctx, &sgotel.Tracer{Provider: noExporter}, g, in, limit)
		}},
		{"adapter-sdk-memory", func(ctx context.Context) (benchState, error) {
			// A fresh recorder per invoke, so that memory does not grow
			// over the benchmark.
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
			defer tp.Shutdown(ctx)
			return sgotel.Invoke(ctx, &sgotel.Tracer{Provider: tp}, g, in, limit)
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				out, err := c.invoke(context.Background())
				if err != nil || out.RetryCount != n {
					b.Fatal(err, out.RetryCount)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(2*n+2)), "ns/node")
		})
	}
}
