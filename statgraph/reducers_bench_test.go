package statgraph_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/statgraph/statgraph/statgraph"
)

var appendWidths = []int{100, 1_000, 10_000, 100_000}

// BenchmarkAppendFold folds w one-element updates into a list, as the
// merge of a w-wide fan-out does: with statgraph.Append, and with the
// built-in append as the floor. ns/item stays flat for both when Append is
// amortised linear.
func BenchmarkAppendFold(b *testing.B) {
	upd := []int{1}
	for _, w := range appendWidths {
		b.Run(fmt.Sprintf("statgraph/%d", w), func(b *testing.B) {
			for b.Loop() {
				var l []int
				for range w {
					l = statgraph.Append(l, upd)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(w), "ns/item")
		})
		b.Run(fmt.Sprintf("builtin/%d", w), func(b *testing.B) {
			for b.Loop() {
				var l []int
				for range w {
					l = append(l, upd...)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(w), "ns/item")
		})
	}
}

// BenchmarkFanoutAppend runs a graph of w parallel nodes, each adding one
// item through an Append reducer: ns/item should stay flat as w grows.
func BenchmarkFanoutAppend(b *testing.B) {
	for _, w := range appendWidths[:3] {
		b.Run(fmt.Sprint(w), func(b *testing.B) {
			bld := statgraph.New[listState]().SetReducer(func(cur, upd listState) listState {
				cur.Items = statgraph.Append(cur.Items, upd.Items)
				return cur
			})
			for i := range w {
				name := fmt.Sprintf("n%06d", i)
				item := []string{name}
				bld.AddNode(name, func(context.Context, listState) (listState, error) { return listState{Items: item}, nil }).
					AddEdge(statgraph.Start, name).AddEdge(name, statgraph.End)
			}
			g, err := bld.Compile()
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			for b.Loop() {
				out, err := g.Invoke(ctx, listState{})
				if err != nil || len(out.Items) != w {
					b.Fatal(err, len(out.Items))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(w), "ns/item")
		})
	}
}
