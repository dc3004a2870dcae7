package statgraph

import (
	"slices"
)

// WithEvents chooses the kinds of event a Stream yields; EventRunEnd, which
// carries the run's error, is always yielded. It maps LangGraph's stream
// modes onto event kinds:
//
//   - values: EventUpdate, the state after each step's merge;
//   - updates: EventNodeUpdate, each node's own update before the merge
//     (for a node restored from a pending write too);
//   - custom: EventCustom, values a node writes with RuntimeOf(ctx).Write
//     (progress, tokens);
//   - debug: every lifecycle kind, which is what Stream yields without
//     this option (or with no kinds given).
//
// EventNodeUpdate and EventCustom are produced only when asked for here, so
// that a run that does not want them pays nothing for them. Events of a
// subgraph are filtered the same way. Without Stream (Invoke with
// WithTrace) the option has no effect.
func WithEvents(kinds ...EventKind) RunOption {
	kinds = slices.Clone(kinds)
	if len(kinds) == 0 {
		kinds = nil
	}
	return func(c *runConfig) { c.kinds = kinds }
}

// none is the state type of events forwarded across a type boundary (from
// a subgraph, or written with Runtime.Write).
type none = struct{}

// forward yields ev now when the node runs alone in its step, or holds it
// back to the step's barrier (see emitEnd) when it runs in parallel.
func (se *slotEvents[S]) forward(ev Event[none]) bool {
	r := se.r
	out := retype[none, S](ev)
	if len(r.slots) == 1 {
		return r.emit(out)
	}
	se.retry = append(se.retry, out)
	return true
}

// retype copies an event to another state type, leaving State zero.
func retype[A, B any](ev Event[A]) Event[B] {
	return Event[B]{
		Kind: ev.Kind, Step: ev.Step, Nodes: ev.Nodes, Node: ev.Node, Attempt: ev.Attempt,
		Duration: ev.Duration, Delay: ev.Delay, Err: ev.Err, Key: ev.Key, To: ev.To,
		CheckpointID: ev.CheckpointID, Interrupts: ev.Interrupts, Thread: ev.Thread,
		Namespace: ev.Namespace, Custom: ev.Custom, Cached: ev.Cached,
	}
}

// emitNodeUpdates yields the own update of each task of the step that
// finished (the plain nodes in node-name order, then the Sends in send
// order), before the merge folds them into the state, or before the run
// pauses or fails with the step unfinished.
func (r *run[S]) emitNodeUpdates() bool {
	for i := range r.slots {
		if sl := &r.slots[i]; sl.err == nil {
			if !r.emit(Event[S]{Kind: EventNodeUpdate, Step: r.step, Node: r.taskNode(i).name, State: sl.out}) {
				return false
			}
		}
	}
	return true
}

// wants reports whether a Stream asked for events of kind k.
func (c *runConfig) wants(k EventKind) bool {
	if k == EventRunEnd {
		return true
	}
	if c.kinds == nil {
		// The default: every kind except the opt-in ones.
		return k != EventNodeUpdate && k != EventCustom
	}
	return slices.Contains(c.kinds, k)
}
