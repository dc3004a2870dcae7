// Command w4 runs workload W4 of issue 12: Send over N items through a map
// node and a reduce node, with statgraph and with hand-written Go (one
// goroutine per item, a WaitGroup, then the sum), alternating the two
// sides rep by rep in one process so that both see the same machine load.
// It prints the harness's result line for statgraph with the medians of
// both sides (wall and CPU µs per item, from the rusage of the process)
// and their ratios. Unit: one item.
//
//	usage: w4 N [REPS]      (env WARMUP, default 1)
package main

import (
	"context"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/tests/bench/internal/harness"
)

// state is the graph's state: an item (a Send's input), the mapped values
// and their sum.
type state struct {
	Item int
	Out  []int
	Sum  int
}

func graph(n int) *statgraph.Graph[state] {
	g, err := statgraph.New[state]().
		SetReducer(func(cur, u state) state {
			cur.Out = statgraph.Append(cur.Out, u.Out)
			cur.Sum = statgraph.Last(cur.Sum, u.Sum)
			return cur
		}).
		AddNode("split", func(context.Context, state) (state, error) { return state{}, nil }).
		AddSends("split", func(context.Context, state) []statgraph.Send[state] {
			sends := make([]statgraph.Send[state], n)
			for i := range sends {
				sends[i] = statgraph.Send[state]{To: "map", Input: state{Item: i}}
			}
			return sends
		}, "map").
		AddNode("map", func(_ context.Context, s state) (state, error) { return state{Out: []int{2 * s.Item}}, nil }).
		AddNode("reduce", func(_ context.Context, s state) (state, error) {
			sum := 0
			for _, v := range s.Out {
				sum += v
			}
			return state{Sum: sum}, nil
		}).
		AddEdge(statgraph.Start, "split").AddEdge("map", "reduce").AddEdge("reduce", statgraph.End).
		Compile()
	if err != nil {
		harness.Die("compile", err)
	}
	return g
}

// plain is the hand-written side: the same map and reduce with goroutines.
func plain(n int) int {
	out := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { out[i] = 2 * i })
	}
	wg.Wait()
	sum := 0
	for _, v := range out {
		sum += v
	}
	return sum
}

func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func main() {
	n := harness.Arg(0, 1000)
	reps := harness.Arg(1, 20)
	warmup := harness.Env("WARMUP", 1)
	want := n * (n - 1) // sum of 2i for i < n
	g := graph(n)
	ctx := context.Background()
	runGraph := func(m *harness.Meter) {
		if m != nil {
			m.Start()
		}
		out, err := g.Invoke(ctx, state{})
		if m != nil {
			m.Stop()
		}
		if err != nil {
			harness.Die("invoke", err)
		}
		harness.Check(out.Sum == want && len(out.Out) == n && out.Out[n-1] == 2*(n-1), "statgraph: sum %d of %d values; want %d in Send order", out.Sum, len(out.Out), want)
	}
	runPlain := func(m *harness.Meter) {
		if m != nil {
			m.Start()
		}
		sum := plain(n)
		if m != nil {
			m.Stop()
		}
		harness.Check(sum == want, "goplain: sum %d; want %d", sum, want)
	}
	for range warmup {
		runGraph(nil)
		runPlain(nil)
	}
	var sg, gp harness.Meter
	var sgWall, sgCPU, gpWall, gpCPU []float64
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(n) }
	for range reps {
		w0, c0 := sg.Total(), cpu()
		runGraph(&sg)
		sgWall, sgCPU = append(sgWall, per(sg.Total()-w0)), append(sgCPU, per(cpu()-c0))
		w0, c0 = gp.Total(), cpu()
		runPlain(&gp)
		gpWall, gpCPU = append(gpWall, per(gp.Total()-w0)), append(gpCPU, per(cpu()-c0))
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }
	sw, sc, pw, pc := harness.Median(sgWall), harness.Median(sgCPU), harness.Median(gpWall), harness.Median(gpCPU)
	harness.Report(harness.Result{Workload: "W4", N: n, Unit: "item", Units: reps * n, Reps: reps, Warmup: warmup, Extra: []string{
		"median_us_per_item=" + f(sw), "cpu_us_per_item=" + f(sc),
		"goplain_median_us_per_item=" + f(pw), "goplain_cpu_us_per_item=" + f(pc),
		"ratio_wall=" + f(sw/pw), "ratio_cpu=" + f(sc/pc),
	}}, &sg)
}
