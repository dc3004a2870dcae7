package statgraph

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// checkLimits refuses a WithMaxConcurrency naming a node the graph does
// not have.
func (r *run[S]) checkLimits() error {
	for _, name := range sortedKeys(r.cfg.nodeConc) {
		if _, ok := r.g.byName[name]; !ok {
			names := sortedKeys(r.g.byName)
			return fmt.Errorf("statgraph: WithMaxConcurrency(%d, %q): the graph has no node %q; its nodes are %s",
				r.cfg.nodeConc[name], name, name, strings.Join(names, ", "))
		}
	}
	return nil
}

// execBounded runs the step's tasks that are not done on m goroutines (the
// caller's among them), each taking the next task in slot order until none
// is left (WithMaxConcurrency).
func (r *run[S]) execBounded(m int, put bool) {
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(r.slots) {
				return
			}
			if sl := &r.slots[i]; !sl.done {
				r.exec(sl, r.taskNode(i))
				if put {
					r.putWrite(i)
				}
			}
		}
	}
	var wg sync.WaitGroup
	for range m - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// execLimited runs the step's tasks that are not done with at most m at
// once (0: no step bound) and at most r.limits[i] tasks of node i at once
// (WithMaxConcurrency with nodes). It starts no more goroutines than tasks
// can run together; each takes the first task in slot order whose node has
// room, and waits when every task left is of a node at its bound.
func (r *run[S]) execLimited(m int, put bool) {
	perNode := make([]int, len(r.g.nodes))
	for i := range r.slots {
		if !r.slots[i].done {
			perNode[r.taskNode(i).idx]++
		}
	}
	workers := 0
	for idx, c := range perNode {
		if l := r.limits[idx]; l > 0 && l < c {
			c = l
		}
		workers += c
	}
	if m > 0 && m < workers {
		workers = m
	}
	var mu sync.Mutex // guards taken, first and running
	ready := sync.NewCond(&mu)
	taken := make([]bool, len(r.slots))
	running := make([]int, len(r.g.nodes))
	first := 0 // every slot before it is taken or done
	work := func() {
		mu.Lock()
		defer mu.Unlock()
		for {
			for first < len(taken) && (taken[first] || r.slots[first].done) {
				first++
			}
			if first == len(taken) {
				return
			}
			i, idx := -1, 0
			for j := first; j < len(taken); j++ {
				if taken[j] || r.slots[j].done {
					continue
				}
				idx = r.taskNode(j).idx
				if l := r.limits[idx]; l == 0 || running[idx] < l {
					i = j
					break
				}
			}
			if i < 0 {
				ready.Wait()
				continue
			}
			taken[i] = true
			running[idx]++
			mu.Unlock()
			r.exec(&r.slots[i], r.g.nodes[idx])
			if put {
				r.putWrite(i)
			}
			mu.Lock()
			running[idx]--
			ready.Broadcast()
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}
