// Command w1 runs workload W1 of ../shared/bench-anchors (the retry loop:
// planner -> executor <-> verifier, N iterations, 2N+2 node executions per
// invocation) on statgraph and prints the harness's result line.
//
//	usage: w1 N [REPS]      (env WARMUP, default 1)
package main

import (
	"context"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/tests/bench/internal/harness"
)

func main() {
	n := harness.Arg(0, 1000)
	reps := harness.Arg(1, 10)
	warmup := harness.Env("WARMUP", 1)
	g, err := harness.W1().Compile()
	if err != nil {
		harness.Die("compile", err)
	}
	ctx := context.Background()
	limit := statgraph.WithStepLimit(2*n + 10)
	for range warmup {
		out, err := g.Invoke(ctx, harness.W1State{MaxRetries: n}, limit)
		if err != nil {
			harness.Die("invoke", err)
		}
		harness.CheckW1(out, n)
	}
	var m harness.Meter
	for range reps {
		in := harness.W1State{MaxRetries: n}
		m.Start()
		out, err := g.Invoke(ctx, in, limit)
		m.Stop()
		if err != nil {
			harness.Die("invoke", err)
		}
		harness.CheckW1(out, n)
	}
	harness.Report(harness.Result{Workload: "W1", N: n, Unit: "node_exec", Units: reps * (2*n + 2), Reps: reps, Warmup: warmup}, &m)
}
