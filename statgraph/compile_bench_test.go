package statgraph_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/statgraph/statgraph/statgraph"
)

// compileShapes builds the graphs BenchmarkCompile compiles: a chain
// Start -> n0 -> ... -> End and a fan-out Start -> hub -> every leaf -> End,
// of n nodes each, with node names sorting in the order the edges run
// ("asc") or against it ("desc"). Compile once settled one node per pass
// when names sorted in chain order, so both orders are measured.
//
// Two shapes add Builder.AddCheck checks, one per pair of neighbours in
// the chain, which once walked the graph from every distinct source:
// "checks" is the chain, each check asking that the first of its pair
// reach the second and not the other way; "gates" adds an edge from every
// odd node back to the one before it, as a gate's retry edge does, and
// each such pair has the check a gate adds (its retry target is reached
// from Start and leads back to it).
func compileShapes(shape, order string, n int) *statgraph.Builder[int] {
	noop := func(_ context.Context, s int) (int, error) { return s, nil }
	name := func(i int) string {
		if order == "desc" {
			i = n - 1 - i
		}
		return fmt.Sprintf("n%07d", i)
	}
	b := statgraph.New[int]()
	switch shape {
	case "chain", "checks", "gates":
		for i := range n {
			b.AddNode(name(i), noop)
		}
		b.AddEdge(statgraph.Start, name(0))
		for i := 1; i < n; i++ {
			b.AddEdge(name(i-1), name(i))
		}
		b.AddEdge(name(n-1), statgraph.End)
		for i := 1; i < n; i++ {
			from, to := name(i-1), name(i)
			switch {
			case shape == "checks":
				b.AddCheck(func(reaches func(from, to string) bool) error {
					if !reaches(statgraph.Start, from) || !reaches(from, to) || reaches(to, from) {
						return fmt.Errorf("%s, %s: wrong reachability", from, to)
					}
					return nil
				})
			case shape == "gates" && i%2 == 1:
				b.AddEdge(to, from) // the retry edge
				b.AddCheck(func(reaches func(from, to string) bool) error {
					if !reaches(statgraph.Start, from) || !reaches(from, to) {
						return fmt.Errorf("gate %s: retry target %s is not upstream", to, from)
					}
					return nil
				})
			}
		}
	case "fanout":
		hub := "a_hub" // sorts before the leaves ("asc") or after them
		if order == "desc" {
			hub = "z_hub"
		}
		b.AddNode(hub, noop).AddEdge(statgraph.Start, hub)
		for i := range n - 1 {
			b.AddNode(name(i), noop).AddEdge(hub, name(i)).AddEdge(name(i), statgraph.End)
		}
	}
	return b
}

// BenchmarkCompile measures Compile alone (the Builder is built once) on
// chains and fan-outs of growing size; ns/node should stay flat if Compile
// is linear. The floor, BenchmarkBuild, builds the same graphs: linear work
// (a map insert per node, an append per edge) on the same data, so the
// ratio of the two stays flat when Compile is linear, whatever the
// machine's cache and noise do to both at large sizes.
func BenchmarkCompile(b *testing.B) {
	for _, shape := range []string{"chain", "fanout", "checks", "gates"} {
		for _, order := range []string{"asc", "desc"} {
			for _, n := range []int{1_000, 10_000, 100_000} {
				b.Run(fmt.Sprintf("%s/%s/%d", shape, order, n), func(b *testing.B) {
					bld := compileShapes(shape, order, n)
					for b.Loop() {
						if _, err := bld.Compile(); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
				})
			}
		}
	}
}

// BenchmarkBuild is BenchmarkCompile's floor: building the same graphs.
func BenchmarkBuild(b *testing.B) {
	for _, shape := range []string{"chain", "fanout", "checks", "gates"} {
		for _, order := range []string{"asc", "desc"} {
			for _, n := range []int{1_000, 10_000, 100_000} {
				b.Run(fmt.Sprintf("%s/%s/%d", shape, order, n), func(b *testing.B) {
					for b.Loop() {
						compileShapes(shape, order, n)
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
				})
			}
		}
	}
}
