package dispatch

import (
	"slices"

	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/statgraph/statgraph/tasks"
)

// randomUnits returns n units in file order, each depending on up to three
// earlier units (a DAG, as Load guarantees), some with a Hold, and initial
// statuses mixing every kind Next distinguishes.
func randomUnits(rng *rand.Rand, n int) ([]tasks.Unit, map[string]string) {
	initial := []string{"", tasks.StatusPending, tasks.StatusPending, tasks.StatusPending, tasks.StatusDone, tasks.StatusFailed, tasks.StatusCancelled, tasks.StatusDeferred, tasks.StatusInterrupted, tasks.StatusInProgress}
	units := make([]tasks.Unit, n)
	status := map[string]string{}
	for i := range units {
		id := fmt.Sprint(i + 1)
		units[i].ID = id
		for range rng.IntN(4) {
			if i > 0 {
				if dep := fmt.Sprint(rng.IntN(i) + 1); !slices.Contains(units[i].Deps, dep) {
					units[i].Deps = append(units[i].Deps, dep)
				}
			}
		}
		if rng.IntN(40) == 0 {
			units[i].Hold = "depends on a task of another tag"
		}
		if st := initial[rng.IntN(len(initial))]; st != "" {
			status[id] = st
		}
	}
	return units, status
}

// TestReadinessMatchesNext drives the readiness index and Next side by side
// through whole random runs (units finish done, failed, cancelled or
// interrupted, in random order, a few at a time) and checks, after every
// change, that the index offers exactly the units Next calls ready (less
// those started) and blocks exactly those Next blocks, with the same
// reasons.
func TestReadinessMatchesNext(t *testing.T) {
	outcomes := []string{tasks.StatusDone, tasks.StatusDone, tasks.StatusDone, tasks.StatusFailed, tasks.StatusCancelled, tasks.StatusInterrupted}
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		units, status := randomUnits(rng, 1+rng.IntN(40))
		started := map[string]bool{}
		r := newReadiness(units, status, started)
		for round := 0; ; round++ {
			// What Next says now, before the index's blocked units are
			// applied (the loop applies them in the next round).
			wantBlocked := tasks.Next(units, status).Blocked
			gotBlocked := r.takeBlocked()
			sortBlocked(gotBlocked)
			if !slices.Equal(gotBlocked, wantBlocked) {
				t.Fatalf("seed %d round %d: blocked %v; want %v", seed, round, gotBlocked, wantBlocked)
			}
			for _, b := range gotBlocked {
				status[b.ID] = tasks.StatusBlocked
			}
			var wantReady []string
			for _, id := range tasks.Next(units, status).Ready {
				if !started[id] {
					wantReady = append(wantReady, id)
				}
			}
			var gotReady []string
			for {
				id, ok := r.pop()
				if !ok {
					break
				}
				gotReady = append(gotReady, id)
			}
			if !slices.Equal(gotReady, wantReady) {
				t.Fatalf("seed %d round %d: ready %v; want %v", seed, round, gotReady, wantReady)
			}
			for _, id := range gotReady {
				started[id] = true
				status[id] = tasks.StatusInProgress
			}
			running := []string{}
			for id := range started {
				if status[id] == tasks.StatusInProgress {
					running = append(running, id)
				}
			}
			if len(running) == 0 {
				break
			}
			slices.Sort(running)
			rng.Shuffle(len(running), func(i, j int) { running[i], running[j] = running[j], running[i] })
			for _, id := range running[:1+rng.IntN(len(running))] {
				st := outcomes[rng.IntN(len(outcomes))]
				status[id] = st
				r.set(id, st)
			}
		}
	}
}

// sortBlocked puts blocked units in file order (ids are their positions),
// the order Next reports them in.
func sortBlocked(b []tasks.Blocked) {
	slices.SortFunc(b, func(x, y tasks.Blocked) int {
		var a, c int
		fmt.Sscan(x.ID, &a)
		fmt.Sscan(y.ID, &c)
		return a - c
	})
}
