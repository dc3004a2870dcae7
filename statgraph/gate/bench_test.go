package gate_test

import (
	"context"
	"fmt"
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

type w2State struct {
	Input   int
	Results []bool
	Passed  bool
	Gate    gate.State
}

// BenchmarkW2 is workload W2 (eight checks in parallel, then a node that
// weighs them) written twice in one run: "plain", a hand-written node over
// a reducer as in statgraph's BenchmarkW2, and "gate", eight validators and
// a gate.Merge reducer. The ratio of their ns/op and allocs/op is the cost
// of the gate layer.
func BenchmarkW2(b *testing.B) {
	plain := statgraph.New[w2State]().SetReducer(func(cur, upd w2State) w2State {
		cur.Results = statgraph.Append(cur.Results, upd.Results)
		cur.Passed = statgraph.Last(cur.Passed, upd.Passed)
		return cur
	})
	gated := statgraph.New[w2State]().SetReducer(func(cur, upd w2State) w2State {
		cur.Gate = gate.Merge(cur.Gate, upd.Gate)
		return cur
	})
	gs := gate.For(func(s *w2State) *gate.State { return &s.Gate })
	names := make([]string, 8)
	for i := range 8 {
		names[i] = fmt.Sprintf("validator_%d", i)
		plain.AddNode(names[i], func(_ context.Context, s w2State) (w2State, error) {
			return w2State{Results: []bool{s.Input >= 0}}, nil
		})
		gs.AddValidator(gated, names[i], func(_ context.Context, s w2State) (gate.Verdict, error) {
			return gate.Verdict{Passed: s.Input >= 0}, nil
		})
		plain.AddEdge(statgraph.Start, names[i]).AddEdge(names[i], "gate")
		gated.AddEdge(statgraph.Start, names[i]).AddEdge(names[i], "gate")
	}
	plain.AddNode("gate", func(_ context.Context, s w2State) (w2State, error) {
		all := len(s.Results) == 8
		for _, ok := range s.Results {
			all = all && ok
		}
		return w2State{Passed: all}, nil
	}).AddEdge("gate", statgraph.End)
	gs.Add(gated, "gate", gate.Config{Validators: names, RetryTarget: names[0], Next: statgraph.End})
	for _, c := range []struct {
		name   string
		b      *statgraph.Builder[w2State]
		passed func(w2State) bool
	}{
		{"plain", plain, func(s w2State) bool { return s.Passed }},
		{"gate", gated, func(s w2State) bool { o, _ := s.Gate.Outcome("gate"); return o.Decision == gate.Passed }},
	} {
		b.Run(c.name, func(b *testing.B) {
			g, err := c.b.Compile()
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				out, err := g.Invoke(context.Background(), w2State{Input: i})
				if err != nil || !c.passed(out) {
					b.Fatal(err, out)
				}
			}
		})
	}
}
