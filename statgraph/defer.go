package statgraph

import (
	"encoding/json"
	"fmt"
	"slices"
)

// WithDefer defers the node (LangGraph's add_node(..., defer=True)): when
// an edge, a route or a Command triggers it while other nodes or Sends are
// also due to run, it is held back, and runs only in the first step in
// which nothing else is left to run, once, however often it was triggered
// meanwhile. It is the sibling of AddJoin for branches whose number is not
// known when the graph is built (a fan-out over Sends, optional branches):
// the deferred node waits for all of them without naming them.
//
// Held nodes are saved with every checkpoint, so a thread resumed after a
// failure or a crash still runs them at the end. Snapshot.Next lists them
// only once they are due.
func WithDefer() NodeOption { return func(c *nodeConfig) { c.deferred = true } }

// deferRecord is the name of the pending-write entry that saves the held
// nodes' names.
const deferRecord = "__defer__"

// heldList returns the held WithDefer nodes.
func (r *run[S]) heldList() []int {
	if r.tq == nil {
		return nil
	}
	return r.tq.held
}

// holdDeferred moves the WithDefer nodes of the next step into the held
// list while anything else is due, and releases the held list into the
// next step when nothing else is.
func (r *run[S]) holdDeferred() {
	held := r.heldList()
	keep := r.next[:0]
	for _, i := range r.next {
		switch {
		case !r.g.nodes[i].deferred:
			keep = append(keep, i)
		case !slices.Contains(held, i):
			held = append(held, i)
		}
	}
	r.next = keep
	if len(r.next) == 0 && len(r.sendList()) == 0 {
		r.next, held = append(r.next, held...), held[:0]
	}
	if len(held) > 0 || r.tq != nil {
		r.queue().held = held
	}
}

// deferRecords returns the entry saving the held nodes, if any.
func (r *run[S]) deferRecords() []PendingWrite {
	held := r.heldList()
	if len(held) == 0 {
		return nil
	}
	names := make([]string, len(held))
	for k, i := range held {
		names[k] = r.g.nodes[i].name
	}
	b, _ := json.Marshal(names) // strings always encode
	return []PendingWrite{{Node: deferRecord, Update: b}}
}

// loadDeferred restores the held nodes saved by deferRecords.
func (r *run[S]) loadDeferred(c *Checkpoint, pw PendingWrite) error {
	var names []string
	if err := json.Unmarshal(pw.Update, &names); err != nil {
		return fmt.Errorf("%w: thread %q checkpoint %d: held-node record: %w", ErrCorruptCheckpoint, c.Thread, c.ID, err)
	}
	q := r.queue()
	q.held = q.held[:0]
	for _, name := range names {
		i, ok := r.g.byName[name]
		if !ok || !r.g.nodes[i].deferred {
			return fmt.Errorf("%w: thread %q checkpoint %d: held-node record names %q, which is not a WithDefer node of the graph", ErrCorruptCheckpoint, c.Thread, c.ID, name)
		}
		q.held = append(q.held, i)
	}
	return nil
}
