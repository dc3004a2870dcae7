package dispatch

import (
	"container/heap"
	"fmt"
	"slices"

	"github.com/statgraph/statgraph/tasks"
)

// readiness indexes a run's units by what they wait for, so that a round of
// the dispatch loop costs what changed rather than the whole file: each unit
// counts its dependencies that are not done yet, each unit lists the units
// that depend on it, and the units whose count reached zero wait in a queue
// in file order. Next is the rule it keeps (one rule, two speeds): new takes
// its first Step from Next, and every later change applies the same rule to
// the dependents of the unit that changed only.
//
// A readiness is used by the dispatch loop's goroutine only.
type readiness struct {
	units      []tasks.Unit
	pos        map[string]int  // unit id -> index in units
	status     []string        // each unit's status, as Next reads it
	waiting    []int           // each unit's dependencies that are not done
	dependents [][]int         // the units whose Deps name each unit
	taken      []bool          // started by this run, or blocked: never queued again
	queue      indexHeap       // ready units not taken yet, smallest index (file order) first
	fresh      []int           // units blocked since the last takeBlocked
	initial    []tasks.Blocked // the units Next blocked when the index was made, for the first takeBlocked
}

// newReadiness indexes units under status (a missing entry counts as
// pending, as for Next); started names the units this run already took up,
// which are never ready again.
func newReadiness(units []tasks.Unit, status map[string]string, started map[string]bool) *readiness {
	r := &readiness{
		units:      units,
		pos:        make(map[string]int, len(units)),
		status:     make([]string, len(units)),
		waiting:    make([]int, len(units)),
		dependents: make([][]int, len(units)),
		taken:      make([]bool, len(units)),
	}
	for i, u := range units {
		r.pos[u.ID] = i
		r.status[i] = status[u.ID]
		r.taken[i] = started[u.ID]
	}
	for i, u := range units {
		for _, dep := range u.Deps {
			if !tasks.IsDone(status[dep]) {
				r.waiting[i]++
			}
			if j, ok := r.pos[dep]; ok {
				r.dependents[j] = append(r.dependents[j], i)
			}
		}
	}
	step := tasks.Next(units, status)
	r.initial = step.Blocked
	for _, b := range step.Blocked {
		i := r.pos[b.ID]
		r.status[i], r.taken[i] = tasks.StatusBlocked, true
	}
	for _, id := range step.Ready {
		if i := r.pos[id]; !r.taken[i] {
			heap.Push(&r.queue, i)
		}
	}
	return r
}

// any reports whether a unit may be ready: the queue holds one, maybe
// taken since (pop skips those).
func (r *readiness) any() bool { return r.queue.Len() > 0 }

// pop returns the first ready unit in file order and marks it taken, or
// false when none is ready.
func (r *readiness) pop() (string, bool) {
	for r.queue.Len() > 0 {
		i := heap.Pop(&r.queue).(int)
		if !r.taken[i] && tasks.Runnable(r.status[i]) {
			r.taken[i] = true
			return r.units[i].ID, true
		}
	}
	return "", false
}

// peek returns the unit pop would return, without taking it.
func (r *readiness) peek() (string, bool) {
	for r.queue.Len() > 0 {
		if i := r.queue[0]; !r.taken[i] && tasks.Runnable(r.status[i]) {
			return r.units[i].ID, true
		}
		heap.Pop(&r.queue)
	}
	return "", false
}

// set records that unit id now has status st and updates its dependents:
// a done unit makes those it was the last wait of ready; a failed, blocked
// or cancelled one blocks them, and their dependents in turn (see
// takeBlocked). An id that is not indexed is ignored.
func (r *readiness) set(id, st string) {
	i, ok := r.pos[id]
	if !ok {
		return
	}
	was := r.status[i]
	r.status[i] = st
	switch {
	case tasks.IsDone(st) && !tasks.IsDone(was):
		for _, k := range r.dependents[i] {
			r.waiting[k]--
			if r.waiting[k] == 0 && !r.taken[k] && tasks.Runnable(r.status[k]) {
				heap.Push(&r.queue, k)
			}
		}
	case st == tasks.StatusFailed || st == tasks.StatusBlocked || st == tasks.StatusCancelled:
		r.blockDependents(i)
	}
}

// blockDependents blocks every runnable dependent of unit i not taken yet,
// and theirs in turn. Their reasons are given by takeBlocked.
func (r *readiness) blockDependents(i int) {
	stack := []int{i}
	for len(stack) > 0 {
		j := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, k := range r.dependents[j] {
			if r.taken[k] || !tasks.Runnable(r.status[k]) {
				continue
			}
			r.status[k], r.taken[k] = tasks.StatusBlocked, true
			r.fresh = append(r.fresh, k)
			stack = append(stack, k)
		}
	}
}

// takeBlocked returns the units blocked since the last call, in file order,
// each with the reason Next gives: the first dependency that was failed,
// cancelled or blocked before (that is, not blocked since the last call),
// else the first one blocked since the last call.
func (r *readiness) takeBlocked() []tasks.Blocked {
	if r.initial != nil {
		out := r.initial
		r.initial = nil
		return append(out, r.takeBlocked()...)
	}
	if len(r.fresh) == 0 {
		return nil
	}
	fresh := make(map[int]bool, len(r.fresh))
	for _, k := range r.fresh {
		fresh[k] = true
	}
	slices.Sort(r.fresh)
	out := make([]tasks.Blocked, 0, len(r.fresh))
	for _, k := range r.fresh {
		out = append(out, tasks.Blocked{ID: r.units[k].ID, Reason: r.blockReason(k, fresh)})
	}
	r.fresh = r.fresh[:0]
	return out
}

func (r *readiness) blockReason(k int, fresh map[int]bool) string {
	for _, dep := range r.units[k].Deps {
		if j, ok := r.pos[dep]; ok && !fresh[j] {
			if st := r.status[j]; st == tasks.StatusFailed || st == tasks.StatusBlocked || st == tasks.StatusCancelled {
				return fmt.Sprintf("dependency %s %s", dep, st)
			}
		}
	}
	for _, dep := range r.units[k].Deps {
		if j, ok := r.pos[dep]; ok && fresh[j] {
			return fmt.Sprintf("dependency %s blocked", dep)
		}
	}
	return "" // not reached: a unit is blocked through one of its dependencies
}

// deps returns unit id's dependencies, or nil when id is not indexed.
func (r *readiness) deps(id string) []string {
	if i, ok := r.pos[id]; ok {
		return r.units[i].Deps
	}
	return nil
}

// indexHeap is a min-heap of unit indexes (container/heap).
type indexHeap []int

func (h indexHeap) Len() int           { return len(h) }
func (h indexHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h indexHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *indexHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *indexHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// again makes unit id, taken before and parked since, ready again once its
// dependencies are done (they are: it ran). An id that is not indexed is
// ignored.
func (r *readiness) again(id string) {
	i, ok := r.pos[id]
	if !ok {
		return
	}
	r.taken[i] = false
	if r.waiting[i] == 0 && tasks.Runnable(r.status[i]) {
		heap.Push(&r.queue, i)
	}
}
