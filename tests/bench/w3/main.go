// Command w3 runs workload W3 of ../shared/bench-anchors: W1 with the
// in-memory checkpointer saving a checkpoint after every super-step (a fresh
// thread and a fresh checkpointer per invocation), and prints the harness's
// result line. Unit: one node execution, which is one super-step.
//
//	usage: w3 N [REPS]      (env WARMUP, default 1)
package main

import (
	"context"
	"fmt"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/tests/bench/internal/harness"
)

func main() {
	n := harness.Arg(0, 1000)
	reps := harness.Arg(1, 10)
	warmup := harness.Env("WARMUP", 1)
	ctx := context.Background()
	invoke := func(i int, m *harness.Meter) {
		g, err := harness.W1().Compile(statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(false)))
		if err != nil {
			harness.Die("compile", err)
		}
		if m != nil {
			m.Start()
		}
		out, err := g.Invoke(ctx, harness.W1State{MaxRetries: n}, statgraph.WithStepLimit(2*n+10), statgraph.WithThread(fmt.Sprint("w3-", i)))
		if m != nil {
			m.Stop()
		}
		if err != nil {
			harness.Die("invoke", err)
		}
		harness.CheckW1(out, n)
	}
	for i := range warmup {
		invoke(i, nil)
	}
	var m harness.Meter
	for i := range reps {
		invoke(i, &m)
	}
	harness.Report(harness.Result{Workload: "W3", N: n, Unit: "node_exec", Units: reps * (2*n + 2), Reps: reps, Warmup: warmup}, &m)
}
