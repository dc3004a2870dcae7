// Command w2 runs workload W2 of ../shared/bench-anchors (fan-out/fan-in:
// eight validators in parallel, each appending one boolean through a
// reducer, then a gate) on statgraph and prints the harness's result line.
//
//	usage: w2 N      (env WARMUP, default 100)
package main

import (
	"context"
	"fmt"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/tests/bench/internal/harness"
)

const fan = 8

type state struct {
	Input     int
	Results   []bool
	AllPassed bool
}

func build() (*statgraph.Graph[state], error) {
	b := statgraph.New[state]().SetReducer(func(cur, upd state) state {
		cur.Results = statgraph.Append(cur.Results, upd.Results)
		cur.AllPassed = statgraph.Last(cur.AllPassed, upd.AllPassed)
		return cur
	})
	for i := range fan {
		name := fmt.Sprintf("validator_%d", i)
		b.AddNode(name, func(_ context.Context, s state) (state, error) {
			return state{Results: []bool{s.Input >= 0}}, nil
		})
		b.AddEdge(statgraph.Start, name).AddEdge(name, "gate")
	}
	b.AddNode("gate", func(_ context.Context, s state) (state, error) {
		all := len(s.Results) == fan
		for _, ok := range s.Results {
			all = all && ok
		}
		return state{AllPassed: all}, nil
	}).AddEdge("gate", statgraph.End)
	return b.Compile()
}

func check(s state) {
	harness.Check(len(s.Results) == fan, "len(results)=%d, want %d", len(s.Results), fan)
	harness.Check(s.AllPassed, "all_passed=false")
}

func main() {
	n := harness.Arg(0, 1000)
	warmup := harness.Env("WARMUP", 100)
	g, err := build()
	if err != nil {
		harness.Die("compile", err)
	}
	ctx := context.Background()
	invoke := func(i int) state {
		out, err := g.Invoke(ctx, state{Input: i})
		if err != nil {
			harness.Die("invoke", err)
		}
		return out
	}
	for i := range warmup {
		check(invoke(i))
	}
	var m harness.Meter
	m.Start()
	for i := range n {
		check(invoke(i))
	}
	m.Stop()
	harness.Report(harness.Result{Workload: "W2", N: n, Unit: "invoke", Units: n, Reps: 1, Warmup: warmup}, &m)
}
