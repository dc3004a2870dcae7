package dispatch

import (
	"fmt"
	"testing"

	"github.com/statgraph/statgraph/tasks"
)

// chainUnits returns n units in chains of 10, each depending on the one
// before it, all pending.
func chainUnits(n int) []tasks.Unit {
	units := make([]tasks.Unit, n)
	for i := range units {
		units[i].ID = fmt.Sprint(i + 1)
		if i%10 != 0 {
			units[i].Deps = []string{fmt.Sprint(i)}
		}
	}
	return units
}

// BenchmarkDispatchRounds is the dispatch loop's own bookkeeping for a
// whole run of n units (8 running at a time, one finishing per round), with
// the readiness index and, for comparison, with Next rescanning every unit
// each round (what the loop did before). It reports the cost per unit,
// which stays flat for the index as n grows.
func BenchmarkDispatchRounds(b *testing.B) {
	for _, n := range []int{200, 1000, 10000} {
		units := chainUnits(n)
		b.Run(fmt.Sprintf("index/units=%d", n), func(b *testing.B) {
			for b.Loop() {
				status := make(map[string]string, n)
				r := newReadiness(units, status, nil)
				var running []string
				for {
					for len(running) < 8 {
						id, ok := r.pop()
						if !ok {
							break
						}
						running = append(running, id)
					}
					if len(running) == 0 {
						break
					}
					r.set(running[0], tasks.StatusDone)
					running = running[1:]
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/unit")
		})
		if n > 1000 {
			continue // quadratic: minutes at 10,000
		}
		b.Run(fmt.Sprintf("rescan/units=%d", n), func(b *testing.B) {
			for b.Loop() {
				status := make(map[string]string, n)
				started := map[string]bool{}
				var running []string
				for {
					for _, id := range tasks.Next(units, status).Ready {
						if len(running) < 8 && !started[id] {
							started[id] = true
							running = append(running, id)
						}
					}
					if len(running) == 0 {
						break
					}
					status[running[0]] = tasks.StatusDone
					running = running[1:]
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/unit")
		})
	}
}
