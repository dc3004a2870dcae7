package statgraph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/statgraph/statgraph/statgraph"
)

// bumpVersion is the coder of retryLoop in the benchmarks.
func bumpVersion(_ context.Context, s cycleState) (cycleState, error) {
	s.Version++
	return s, nil
}

// retryLoop is a gated retry loop: coder (which must add one to Version)
// runs, check fails until coder has run passAt times, and the gate sends
// the run back to coder. Every cycle is three super-steps, so three
// checkpoints, and adds one attempt, one gate decision and one advisory
// warning to the gate state.
func retryLoop(passAt int, coder statgraph.NodeFunc[cycleState]) *statgraph.Builder[cycleState] {
	return statgraph.New[cycleState]().
		AddNode("coder", coder).
		AddValidator("check", func(_ context.Context, s cycleState) (statgraph.Verdict, error) {
			return statgraph.Verdict{Passed: s.Version >= passAt, Feedback: fmt.Sprintf("version %d is too low", s.Version)}, nil
		}).
		AddValidator("style", func(_ context.Context, s cycleState) (statgraph.Verdict, error) {
			return statgraph.Verdict{Feedback: fmt.Sprintf("version %d could read better", s.Version)}, nil
		}, statgraph.WithMode(statgraph.ModeAdvisory)).
		AddGate("gate", statgraph.GateConfig[cycleState]{Validators: []string{"check", "style"}, RetryTarget: "coder", MaxRetries: passAt + 1}).
		AddEdge(statgraph.Start, "coder").AddEdge("coder", "check").AddEdge("coder", "style").
		AddEdge("check", "gate").AddEdge("style", "gate").AddEdge("gate", statgraph.End)
}

// BenchmarkGateExtra runs a gated retry loop of n retries on an encoding
// in-memory store and reports the bytes of gate state (Checkpoint.Extra)
// written per checkpoint (on average, and for the increments alone: their
// mean and largest), the number of full documents, and the time per
// checkpoint. The increments must not grow with n; the average includes
// the full documents, written once the increments add up to their size.
func BenchmarkGateExtra(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("retries=%d", n), func(b *testing.B) {
			cp := &statgraph.MemoryCheckpointer{Encode: true}
			g := mustCompile(b, retryLoop(n+1, bumpVersion), statgraph.WithCheckpointer(cp))
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := cp.DeleteThread(ctx, "t"); err != nil {
					b.Fatal(err)
				}
				out, err := g.Invoke(ctx, cycleState{}, statgraph.WithThread("t"), statgraph.WithStepLimit(3*n+10))
				if err != nil || out.Version != n+1 {
					b.Fatal(err, out)
				}
			}
			list, err := cp.List(ctx, "t", 0)
			if err != nil {
				b.Fatal(err)
			}
			total, inc, incs, maxInc := 0, 0, 0, 0
			for _, c := range list {
				total += len(c.Extra)
				var doc struct{ From json.RawMessage }
				if err := json.Unmarshal(c.Extra, &doc); err != nil {
					b.Fatal(err)
				}
				if doc.From != nil {
					inc, incs, maxInc = inc+len(c.Extra), incs+1, max(maxInc, len(c.Extra))
				}
			}
			b.ReportMetric(float64(total)/float64(len(list)), "extraB/ckpt")
			b.ReportMetric(float64(inc)/float64(max(incs, 1)), "incB/inc")
			b.ReportMetric(float64(maxInc), "maxIncB")
			b.ReportMetric(float64(len(list)-incs), "fullDocs")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(list)), "ns/ckpt")
		})
	}
}
