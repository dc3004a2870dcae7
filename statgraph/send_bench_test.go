package statgraph_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/statgraph/statgraph/statgraph"
)

// w4State is the state of W4: items to map, and the mapped values summed.
type w4State struct {
	Items []int
	Item  int
	Sum   int
}

const w4Items = 1000

func w4() *statgraph.Builder[w4State] {
	return statgraph.New[w4State]().
		SetReducer(func(cur, upd w4State) w4State {
			cur.Sum += upd.Sum
			if upd.Items != nil {
				cur.Items = upd.Items
			}
			return cur
		}).
		AddNode("split", func(context.Context, w4State) (w4State, error) { return w4State{}, nil }).
		AddSends("split", func(_ context.Context, s w4State) []statgraph.Send[w4State] {
			out := make([]statgraph.Send[w4State], len(s.Items))
			for i, it := range s.Items {
				out[i] = statgraph.Send[w4State]{To: "map", Input: w4State{Item: it}}
			}
			return out
		}, "map").
		AddNode("map", func(_ context.Context, s w4State) (w4State, error) { return w4State{Sum: s.Item * 2}, nil }).
		AddNode("reduce", func(_ context.Context, s w4State) (w4State, error) { return w4State{}, nil }).
		AddEdge(statgraph.Start, "split").AddEdge("map", "reduce").AddEdge("reduce", statgraph.End)
}

// BenchmarkW4 is Send over 1,000 items through a map node and a reduce
// node: statgraph, against the same map-reduce written by hand with one
// goroutine per item (the floor). Compare their ns/item.
func BenchmarkW4(b *testing.B) {
	items := make([]int, w4Items)
	for i := range items {
		items[i] = i
	}
	const want = w4Items * (w4Items - 1) // sum of 2i
	b.Run("statgraph", func(b *testing.B) {
		g := mustCompile(b, w4())
		b.ReportAllocs()
		for b.Loop() {
			out, err := g.Invoke(context.Background(), w4State{Items: items})
			if err != nil || out.Sum != want {
				b.Fatal(err, out.Sum)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*w4Items), "ns/item")
	})
	b.Run("goroutines", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out := make([]int, len(items))
			var wg sync.WaitGroup
			for i, it := range items {
				wg.Go(func() { out[i] = it * 2 })
			}
			wg.Wait()
			sum := 0
			for _, v := range out {
				sum += v
			}
			if sum != want {
				b.Fatal(sum)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*w4Items), "ns/item")
	})
}

// BenchmarkSendsBound runs W4's 1,000 Sends without a bound, with
// WithMaxConcurrency(8) for the step and with WithMaxConcurrency(8, "map")
// for the map node, reporting the peak number of goroutines seen by a task
// (goroutines-peak) beside time and allocations.
func BenchmarkSendsBound(b *testing.B) {
	items := make([]int, w4Items)
	for i := range items {
		items[i] = i
	}
	for _, c := range []struct {
		name string
		opts []statgraph.RunOption
	}{
		{"unbounded", nil},
		{"max8", []statgraph.RunOption{statgraph.WithMaxConcurrency(8)}},
		{"node8", []statgraph.RunOption{statgraph.WithMaxConcurrency(8, "map")}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var peak atomic.Int64
			hook := statgraph.WithNodeHook(func(ctx context.Context, node string, step, attempt int) (context.Context, func(error)) {
				n := int64(runtime.NumGoroutine())
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				return ctx, func(error) {}
			})
			opts := append([]statgraph.RunOption{hook}, c.opts...)
			g := mustCompile(b, w4())
			b.ReportAllocs()
			for b.Loop() {
				if _, err := g.Invoke(context.Background(), w4State{Items: items}, opts...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(peak.Load()), "goroutines-peak")
		})
	}
}
