package statgraph

import (
	"context"
	"errors"
	"strconv"
)

// childGraph is the compiled graph of a subgraph node (AddSubgraph): drawn
// inside the node's box, and read by the parent's State.
type childGraph interface {
	drawable
	// anySnapshot is the latest snapshot of thread in store with the state
	// as an any, its own subgraphs included; ok is false when the thread
	// has no checkpoint.
	anySnapshot(ctx context.Context, store Checkpointer, thread string) (s Snapshot[any], ok bool, err error)
}

func (g *Graph[S]) anySnapshot(ctx context.Context, store Checkpointer, thread string) (Snapshot[any], bool, error) {
	s, err := g.latest(ctx, store, thread)
	if errors.Is(err, ErrNoCheckpoint) {
		return Snapshot[any]{}, false, nil
	}
	if err != nil {
		return Snapshot[any]{}, false, err
	}
	return Snapshot[any]{
		Thread: s.Thread, CheckpointID: s.CheckpointID, Parent: s.Parent, Step: s.Step, Source: s.Source, Created: s.Created,
		State: s.State, Next: s.Next, Interrupts: s.Interrupts, Counters: s.Counters, Subgraphs: s.Subgraphs,
	}, true, nil
}

// latest is State on store: the latest snapshot of thread, with the
// snapshots of its subgraph nodes' runs.
func (g *Graph[S]) latest(ctx context.Context, store Checkpointer, thread string) (Snapshot[S], error) {
	cp, err := store.Get(ctx, thread, 0)
	if err != nil {
		return Snapshot[S]{}, err
	}
	chain, err := readChain(ctx, store, cp)
	if err != nil {
		return Snapshot[S]{}, err
	}
	s, err := g.snapshot(ctx, chain, cp)
	if err != nil || !g.hasSubgraphs {
		return s, err
	}
	s.Subgraphs, err = g.subSnapshots(ctx, store, &s)
	return s, err
}

// subSnapshots reads the child runs of s's subgraph nodes. A child runs
// under the thread "<thread>|<node>:<count>", count being the node's
// executions before it (subgraph.go): for a node in s.Next, its tasks
// there run (or stopped inside) the children counted from
// s.Counters[node] on; for a node that is not, its last run is the one
// counted s.Counters[node]-1.
func (g *Graph[S]) subSnapshots(ctx context.Context, store Checkpointer, s *Snapshot[S]) (map[string]Snapshot[any], error) {
	var out map[string]Snapshot[any]
	read := func(n *node[S], task string, count int) error {
		child := s.Thread + nsSep + n.name + ":" + strconv.Itoa(count)
		cs, ok, err := n.sub.anySnapshot(ctx, store, child)
		if err != nil || !ok {
			return err
		}
		if out == nil {
			out = map[string]Snapshot[any]{}
		}
		out[task] = cs
		return nil
	}
	for _, n := range g.nodes {
		if n.sub == nil {
			continue
		}
		tasks := 0
		for _, name := range s.Next {
			if name != n.name {
				continue
			}
			task := n.name
			if tasks > 0 {
				task += "[" + strconv.Itoa(tasks) + "]"
			}
			if err := read(n, task, s.Counters[n.name]+tasks); err != nil {
				return nil, err
			}
			tasks++
		}
		if tasks == 0 && s.Counters[n.name] > 0 {
			if err := read(n, n.name, s.Counters[n.name]-1); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
