package gate_test

import (
	"context"
	"testing"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/gate"
)

type cycleState struct {
	Version, Checks int
	Gate            gate.State
}

// BenchmarkRetryCycle compares one retry cycle (coder runs, a check fails,
// the run goes back to coder) written with a gate and with a plain
// conditional edge, in one run; ns/cycle is the figure to compare.
func BenchmarkRetryCycle(b *testing.B) {
	const n = 100
	coderFn := func(_ context.Context, s cycleState) (cycleState, error) {
		s.Version++
		return s, nil
	}
	plain := statgraph.New[cycleState]().
		AddNode("coder", coderFn).
		AddNode("check", func(_ context.Context, s cycleState) (cycleState, error) {
			s.Checks++
			return s, nil
		}).
		AddEdge(statgraph.Start, "coder").AddEdge("coder", "check").
		AddConditionalEdges("check", func(_ context.Context, s cycleState) string {
			if s.Checks > n {
				return "done"
			}
			return "retry"
		}, map[string]string{"retry": "coder", "done": statgraph.End})
	gs := gate.For(func(s *cycleState) *gate.State { return &s.Gate })
	gated := statgraph.New[cycleState]().AddNode("coder", coderFn)
	gs.AddValidator(gated, "check", func(_ context.Context, s cycleState) (gate.Verdict, error) {
		return gate.Verdict{Passed: s.Version > n, Feedback: "version too low"}, nil
	})
	gs.Add(gated, "gate", gate.Config{Validators: []string{"check"}, RetryTarget: "coder", Next: statgraph.End, Policy: gate.Policy{MaxAttempts: n + 2}})
	gated.AddEdge(statgraph.Start, "coder").AddEdge("coder", "check").AddEdge("check", "gate")
	for _, c := range []struct {
		name string
		b    *statgraph.Builder[cycleState]
	}{{"plain", plain}, {"gate", gated}} {
		b.Run(c.name, func(b *testing.B) {
			g, err := c.b.Compile()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				out, err := g.Invoke(context.Background(), cycleState{}, statgraph.WithStepLimit(4*n+10))
				if err != nil || out.Version != n+1 {
					b.Fatal(err, out.Version)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/cycle")
		})
	}
}
