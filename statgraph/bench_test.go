package statgraph_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/statgraph/statgraph/statgraph"
)

type w1State struct {
	RetryCount   int      `json:"retry_count"`
	MaxRetries   int      `json:"max_retries"`
	Passed       bool     `json:"passed"`
	ErrorHistory []string `json:"error_history"`
}

// w1 is workload W1 of the benchmark harness: planner -> executor <->
// verifier, N iterations, then failed.
func w1() *statgraph.Builder[w1State] {
	return statgraph.New[w1State]().
		AddNode("planner", func(_ context.Context, s w1State) (w1State, error) {
			s.RetryCount, s.Passed = 0, false
			return s, nil
		}).
		AddNode("executor", func(_ context.Context, s w1State) (w1State, error) {
			s.RetryCount++
			return s, nil
		}).
		AddNode("verifier", func(_ context.Context, s w1State) (w1State, error) {
			s.Passed = false
			s.ErrorHistory = append(s.ErrorHistory, "verify failed")
			return s, nil
		}).
		AddNode("failed", func(_ context.Context, s w1State) (w1State, error) {
			s.ErrorHistory = append(s.ErrorHistory, "max retries exceeded")
			return s, nil
		}).
		AddEdge(statgraph.Start, "planner").
		AddEdge("planner", "executor").
		AddEdge("executor", "verifier").
		AddConditionalEdges("verifier", shouldRetryOrEnd, map[string]string{"done": statgraph.End, "failed": "failed", "retry": "executor"}).
		AddEdge("failed", statgraph.End)
}

func shouldRetryOrEnd(_ context.Context, s w1State) string {
	switch {
	case s.Passed:
		return "done"
	case s.RetryCount >= s.MaxRetries:
		return "failed"
	}
	return "retry"
}

type w2State struct {
	Input     int
	Results   []bool
	AllPassed bool
}

// w2 is workload W2: eight validators in parallel, then a gate.
func w2() *statgraph.Builder[w2State] {
	b := statgraph.New[w2State]().SetReducer(func(cur, upd w2State) w2State {
		cur.Results = statgraph.Append(cur.Results, upd.Results)
		cur.AllPassed = statgraph.Last(cur.AllPassed, upd.AllPassed)
		return cur
	})
	for i := range 8 {
		name := fmt.Sprintf("validator_%d", i)
		b.AddNode(name, func(_ context.Context, s w2State) (w2State, error) {
			return w2State{Results: []bool{s.Input >= 0}}, nil
		})
		b.AddEdge(statgraph.Start, name).AddEdge(name, "gate")
	}
	return b.AddNode("gate", func(_ context.Context, s w2State) (w2State, error) {
		all := len(s.Results) == 8
		for _, ok := range s.Results {
			all = all && ok
		}
		return w2State{AllPassed: all}, nil
	}).AddEdge("gate", statgraph.End)
}

func mustCompile[S any](b testing.TB, bld *statgraph.Builder[S], opts ...statgraph.CompileOption) *statgraph.Graph[S] {
	g, err := bld.Compile(opts...)
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// BenchmarkW1 reports the cost per node execution of the retry loop.
func BenchmarkW1(b *testing.B) {
	g := mustCompile(b, w1())
	const n = 1000
	b.ReportAllocs()
	for b.Loop() {
		out, err := g.Invoke(context.Background(), w1State{MaxRetries: n}, statgraph.WithStepLimit(2*n+10))
		if err != nil || out.RetryCount != n {
			b.Fatal(err, out.RetryCount)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(2*n+2)), "ns/node")
}

// BenchmarkW2 reports the cost of one 8-way fan-out/fan-in invocation.
func BenchmarkW2(b *testing.B) {
	g := mustCompile(b, w2())
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		out, err := g.Invoke(context.Background(), w2State{Input: i})
		if err != nil || !out.AllPassed {
			b.Fatal(err, out)
		}
	}
}

// BenchmarkW3 is W1 with the in-memory checkpointer saving after every
// super-step; compare its ns/node with BenchmarkW1's.
func BenchmarkW3(b *testing.B) {
	for _, mode := range []struct {
		name string
		cp   func() statgraph.Checkpointer
	}{
		{"values", func() statgraph.Checkpointer { return statgraph.NewMemoryCheckpointer(false) }},
		{"encoded", func() statgraph.Checkpointer { return statgraph.NewMemoryCheckpointer(true) }},
	} {
		for _, n := range []int{100, 1000} {
			b.Run(fmt.Sprintf("%s/N=%d", mode.name, n), func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					g := mustCompile(b, w1(), statgraph.WithCheckpointer(mode.cp()))
					i++
					out, err := g.Invoke(context.Background(), w1State{MaxRetries: n},
						statgraph.WithStepLimit(2*n+10), statgraph.WithThread(fmt.Sprint(i)))
					if err != nil || out.RetryCount != n {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*(2*n+2)), "ns/node")
			})
		}
	}
}

// bigState carries a large slice that the nodes never touch.
type bigState struct {
	Count int
	Big   []string
}

// BenchmarkStepCostVsStateSize shows that the cost of a step does not grow
// with the length of a slice carried in the state: the engine never copies
// or scans the state. The loop runs 100 steps per invocation.
func BenchmarkStepCostVsStateSize(b *testing.B) {
	g := mustCompile(b, statgraph.New[bigState]().
		AddNode("tick", func(_ context.Context, s bigState) (bigState, error) {
			s.Count++
			return s, nil
		}).
		AddEdge(statgraph.Start, "tick").
		AddConditionalEdges("tick", func(_ context.Context, s bigState) string {
			if s.Count >= 100 {
				return "done"
			}
			return "again"
		}, map[string]string{"again": "tick", "done": statgraph.End}))
	for _, size := range []int{0, 10_000, 1_000_000} {
		b.Run(fmt.Sprintf("slice=%d", size), func(b *testing.B) {
			big := make([]string, size)
			b.ReportAllocs()
			for b.Loop() {
				out, err := g.Invoke(context.Background(), bigState{Big: big})
				if err != nil || out.Count != 100 || len(out.Big) != size {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/step")
		})
	}
}

// BenchmarkW1Stream is W1 consumed through Stream. Its ns/event, set against
// BenchmarkW1's ns/node, gives the cost of delivering one event (a W1 node
// execution yields five: step start, node start, node end, update, and a
// route every other step).
func BenchmarkW1Stream(b *testing.B) {
	g := mustCompile(b, w1())
	const n = 1000
	b.ReportAllocs()
	events := 0
	for b.Loop() {
		for ev, err := range g.Stream(context.Background(), w1State{MaxRetries: n}, statgraph.WithStepLimit(2*n+10)) {
			if err != nil {
				b.Fatal(err)
			}
			events++
			_ = ev
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
	b.ReportMetric(float64(events)/float64(b.N*(2*n+2)), "events/node")
}

// TestW2AllocationBudget guards W2's allocations (BenchmarkW2): 36 per
// invocation and 3,416 B (the least of 5 batches), most of it the 8 task slots of the
// fan-out step. A change to the run's or a slot's layout that adds to them
// fails here, not only in a benchmark nobody reran.
func TestW2AllocationBudget(t *testing.T) {
	if raceBuild {
		t.Skip("allocation figures differ under the race detector; this budget is checked without -race")
	}
	const maxAllocs, maxBytes = 36, 3500
	g := mustCompile(t, w2())
	invoke := func() {
		if out, err := g.Invoke(context.Background(), w2State{Input: 1}); err != nil || !out.AllPassed {
			t.Fatal(err, out)
		}
	}
	invoke()
	if allocs := testing.AllocsPerRun(200, invoke); allocs > maxAllocs {
		t.Errorf("W2 allocates %.1f times per invocation; the budget is %d (see BenchmarkW2 with -benchmem)", allocs, maxAllocs)
	}
	// The least of 5 batches: the bytes of a batch vary by a few tens with
	// where the GC's amortised costs fall; the least is steady.
	least := uint64(1 << 62)
	for range 5 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		const runs = 200
		for range runs {
			invoke()
		}
		runtime.ReadMemStats(&after)
		least = min(least, (after.TotalAlloc-before.TotalAlloc)/runs)
	}
	if b := least; b > maxBytes {
		t.Errorf("W2 allocates %d B per invocation; the budget is %d B (see BenchmarkW2 with -benchmem)", b, maxBytes)
	}
}
