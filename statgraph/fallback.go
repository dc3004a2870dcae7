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
// failed for good (its RetryPolicy's attempts are used up, a WithTimeout
// deadline counting as a failed attempt, or the error is Permanent or a
// panic), the run does not end with the error;
// the node's update and edges are dropped and node runs in the next
// super-step instead, where RuntimeOf(ctx).Fallback is the error. Interrupts and
// the run's own cancellation are never handled. The fallback must be a node
// of the graph (Compile checks it). After a resume from a checkpoint the
// error is still a *NodeError with its Node and Attempt, but its Err is
// only the original's message (its Panic the panic's text, without Stack).
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

// savedFailure is one error of a failure record: a *NodeError's fields,
// with its Err and Panic as text, or (Node empty) another error's message.
type savedFailure struct {
	Node    string `json:"node,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
	Err     string `json:"err,omitempty"`
	Panic   string `json:"panic,omitempty"`
}

// failureRecords returns the errors waiting for their fallbacks, each a
// list of the errors joined for that fallback.
func (r *run[S]) failureRecords() []PendingWrite {
	var out []PendingWrite
	failures := r.failureMap()
	for _, i := range slices.Sorted(maps.Keys(failures)) {
		out = append(out, PendingWrite{Node: failureRecord + r.g.nodes[i].name, Update: encodeFailure(failures[i])})
	}
	return out
}

// encodeFailure encodes err for failureOf.
func encodeFailure(err error) []byte {
	var list []savedFailure
	for _, err := range joined(err) {
		var ne *NodeError
		switch {
		case !errors.As(err, &ne):
			list = append(list, savedFailure{Err: err.Error()})
		case ne.Panic != nil:
			list = append(list, savedFailure{Node: ne.Node, Attempt: ne.Attempt, Panic: fmt.Sprint(ne.Panic)})
		default:
			list = append(list, savedFailure{Node: ne.Node, Attempt: ne.Attempt, Err: fmt.Sprint(ne.Err)})
		}
	}
	b, _ := json.Marshal(list) // strings and ints always encode
	return b
}

// handledRecord prefixes the pending-write entry that saves the failure of
// a task its fallback handles, in a step that paused (a sibling's
// Interrupt) or failed: the step run again takes the failure from it
// instead of running the task, and its retries, again.
const handledRecord = "__handled__:"

// joined returns the errors that errors.Join joined into err, or err.
func joined(err error) []error {
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, joined(e)...)
	}
	return out
}

// failureOf rebuilds the error saved by failureRecords: a *NodeError (its
// Err, or its Panic, a string with the panic's text; Stack is lost), or
// several joined. A record written before failures kept their type holds
// the message alone.
func failureOf(raw []byte) (error, bool) {
	var msg string
	if json.Unmarshal(raw, &msg) == nil {
		return errors.New(msg), true
	}
	var list []savedFailure
	if json.Unmarshal(raw, &list) != nil || len(list) == 0 {
		return nil, false
	}
	errs := make([]error, len(list))
	for i, f := range list {
		switch {
		case f.Node == "":
			errs[i] = errors.New(f.Err)
		case f.Panic != "":
			errs[i] = &NodeError{Node: f.Node, Attempt: f.Attempt, Panic: f.Panic}
		default:
			errs[i] = &NodeError{Node: f.Node, Attempt: f.Attempt, Err: errors.New(f.Err)}
		}
	}
	if len(errs) == 1 {
		return errs[0], true
	}
	return errors.Join(errs...), true
}

// loadFailure restores an error saved by failureRecords.
func (r *run[S]) loadFailure(c *Checkpoint, pw PendingWrite) error {
	name := strings.TrimPrefix(pw.Node, failureRecord)
	i, ok := r.g.byName[name]
	failure, decoded := failureOf(pw.Update)
	if !ok || !decoded {
		return fmt.Errorf("%w: thread %q checkpoint %d: the error saved for fallback %q does not fit the graph", ErrCorruptCheckpoint, c.Thread, c.ID, name)
	}
	q := r.queue()
	if q.failures == nil {
		q.failures = map[int]error{}
	}
	q.failures[i] = failure
	return nil
}
