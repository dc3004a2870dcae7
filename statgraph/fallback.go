package statgraph

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// WithFallback makes node the node's error handler: once the node has
// failed for good (its RetryPolicy's attempts are used up, or the error is
// Permanent, a timeout or a panic), the run does not end with the error;
// the node's update and edges are dropped and node runs in the next
// super-step instead, where RuntimeOf(ctx).Fallback is the error. Interrupts and
// the run's own cancellation are never handled. The fallback must be a node
// of the graph (Compile checks it). After a resume from a checkpoint the
// error keeps its message but not its type.
func WithFallback(node string) NodeOption {
	return func(c *nodeConfig) { c.fallback = node }
}

// compileFallbacks resolves WithFallback onto the nodes.
func (g *Graph[S]) compileFallbacks(b *Builder[S], add func(string, ...any)) {
	for _, n := range g.nodes {
		name := b.nodes[n.name].cfg.fallback
		if name == "" {
			continue
		}
		i, ok := g.byName[name]
		if !ok {
			add("node %q: WithFallback(%q): the graph has no such node", n.name, name)
			continue
		}
		n.fallback = &g.nodes[i].idx
	}
}

// handles reports whether the failure in slot sl is left to its node's
// fallback instead of ending the run.
func (r *run[S]) handles(n *node[S], sl *slot[S]) bool {
	if n.fallback == nil || r.ctx.Err() != nil || errors.Is(sl.err, ErrInterrupted) || isHandoff(sl.err) {
		return false
	}
	sl.handled = true
	return true
}

// fallBack sends the run from the failed node n to its fallback, carrying
// the error along.
func (r *run[S]) fallBack(n *node[S], err error) error {
	to := *n.fallback
	if r.emit != nil {
		if !r.emit(Event[S]{Kind: EventRoute, Step: r.step, Node: n.name, Key: fallbackKey, To: r.g.name(to), Err: err}) {
			return r.stopped()
		}
	}
	q := r.queue()
	if q.nextFailures == nil {
		q.nextFailures = map[int]error{}
	}
	if prev := q.nextFailures[to]; prev != nil {
		err = errors.Join(prev, err)
	}
	q.nextFailures[to] = err
	r.add(to)
	return nil
}

// fallbackKey is the Key of the EventRoute reporting a fallback, and the
// label of fallback edges in drawings.
const fallbackKey = "on error"

// failureRecord prefixes the pending-write entry that saves the error a
// fallback node is to handle; the fallback's name follows.
const failureRecord = "__failure__:"

// failureRecords returns the errors waiting for their fallbacks.
func (r *run[S]) failureRecords() []PendingWrite {
	var out []PendingWrite
	failures := r.failureMap()
	for _, i := range slices.Sorted(maps.Keys(failures)) {
		b, _ := json.Marshal(failures[i].Error()) // strings always encode
		out = append(out, PendingWrite{Node: failureRecord + r.g.nodes[i].name, Update: b})
	}
	return out
}

// loadFailure restores an error saved by failureRecords.
func (r *run[S]) loadFailure(c *Checkpoint, pw PendingWrite) error {
	name := strings.TrimPrefix(pw.Node, failureRecord)
	i, ok := r.g.byName[name]
	var msg string
	if !ok || json.Unmarshal(pw.Update, &msg) != nil {
		return fmt.Errorf("%w: thread %q checkpoint %d: the error saved for fallback %q does not fit the graph", ErrCorruptCheckpoint, c.Thread, c.ID, name)
	}
	q := r.queue()
	if q.failures == nil {
		q.failures = map[int]error{}
	}
	q.failures[i] = errors.New(msg)
	return nil
}
