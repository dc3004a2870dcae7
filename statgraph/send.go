package statgraph

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Send is one task of a run-time fan-out (see AddSends): node To runs in
// the next super-step on Input instead of the graph's state.
type Send[S any] struct {
	To    string
	Input S
}

// AddSends makes fan choose, after source runs, any number of tasks for the
// next super-step, each a node with its own input (map-reduce over a list
// known only at run time; LangGraph's Send). fan is a router: it runs
// after source's step on the merged state, like LangGraph's conditional
// edge returning Sends, and the node may have an AddConditionalEdges or
// AddRoutes router too (a path function returning names and Sends). A
// command node sends with Command.Sends instead. The tasks run in parallel with
// the step's other nodes; their updates are merged through the reducer in
// the order fan returned them, after the updates of the step's plain
// nodes, so the result does not depend on which task finished first. Every
// task's node then follows its edges once.
//
// destinations declares every node fan may send to; Compile checks them and
// draws them as dashed "send" edges, and a Send to another node ends the run
// with an error naming it and the declared ones. A node has at most one fan-out. The pending tasks
// and their inputs are saved with each checkpoint (encoded with the graph's
// Codec), and each task's update is stored as soon as it finishes (under
// DurabilitySync), so a run resumed after a failure or a crash runs only
// the unfinished tasks. More than one task
// per step needs a reducer (SetReducer).
func (b *Builder[S]) AddSends(source string, fan func(ctx context.Context, s S) []Send[S], destinations ...string) *Builder[S] {
	switch {
	case fan == nil:
		b.problem("AddSends(%q): nil function", source)
		return b
	case len(destinations) == 0:
		b.problem("AddSends(%q): no destinations; declare every node the fan-out can send to", source)
		return b
	case b.fans[source] != nil:
		b.problem("AddSends(%q): the node already has a fan-out", source)
		return b
	}
	if b.fans == nil {
		b.fans = map[string]*fanSpec[S]{}
	}
	b.fans[source] = &fanSpec[S]{fn: fan, to: slices.Clone(destinations)}
	return b
}

type fanSpec[S any] struct {
	fn func(context.Context, S) []Send[S]
	to []string
}

// fanOut is a compiled AddSends.
type fanOut[S any] struct {
	fn    func(context.Context, S) []Send[S]
	to    map[string]int // declared destination -> node index
	names []string       // declared destinations, sorted
}

// sendTask is a pending Send: the node and its input.
type sendTask[S any] struct {
	node int
	in   S
}

// taskQueue holds a run's Sends and the errors waiting for fallbacks, kept
// out of line so that runs of graphs using neither do not carry them.
type taskQueue[S any] struct {
	sends        []sendTask[S] // the Sends of the current step
	nextSends    []sendTask[S] // the Sends queued for the next step
	failures     map[int]error // per fallback node of this step: the error it handles
	nextFailures map[int]error // the same for the next step
	held         []int         // WithDefer nodes waiting for the rest to finish (defer.go)
}

// queue returns the run's task queue, allocating it on first use.
func (r *run[S]) queue() *taskQueue[S] {
	if r.tq == nil {
		r.tq = new(taskQueue[S])
	}
	return r.tq
}

// sendList returns the Sends of the current step.
func (r *run[S]) sendList() []sendTask[S] {
	if r.tq == nil {
		return nil
	}
	return r.tq.sends
}

// failureMap returns the errors the fallbacks of the current step handle.
func (r *run[S]) failureMap() map[int]error {
	if r.tq == nil {
		return nil
	}
	return r.tq.failures
}

// nextTasks makes the queued Sends and failures those of the next step.
func (r *run[S]) nextTasks() {
	if q := r.tq; q != nil {
		clear(q.sends) // let the inputs be collected
		q.sends, q.nextSends = q.nextSends, q.sends[:0]
		q.failures, q.nextFailures = q.nextFailures, nil
	}
	if r.g.defers {
		r.holdDeferred()
	}
}

// compileFans resolves the builder's fan-outs onto their source nodes.
func (g *Graph[S]) compileFans(b *Builder[S], resolve func(string) (int, bool), nodeOf func(int) *node[S], add func(string, ...any)) {
	for _, src := range sortedKeys(b.fans) {
		fs := b.fans[src]
		from, ok := resolve(src)
		if !ok || from == endIdx {
			add("AddSends(%q): unknown node", src)
			continue
		}
		f := &fanOut[S]{fn: fs.fn, to: make(map[string]int, len(fs.to))}
		for _, name := range fs.to {
			i, ok := resolve(name)
			if !ok || i < 0 {
				add("AddSends(%q): destination %q is not a node of the graph", src, name)
				continue
			}
			if _, dup := f.to[name]; !dup {
				f.to[name] = i
				f.names = append(f.names, name)
			}
		}
		slices.Sort(f.names)
		nodeOf(from).fan = f
	}
}

// sendTo queues the tasks of n's fan-out for the next step.
func (r *run[S]) sendTo(n *node[S]) error {
	for _, s := range n.fan.fn(r.routerCtx(n), r.state) {
		t, ok := n.fan.to[s.To]
		if !ok {
			return fmt.Errorf("%w: node %q sent to %q; its declared destinations are %s (AddSends)",
				errUnknownRoute, n.name, s.To, strings.Join(n.fan.names, ", "))
		}
		if r.emit != nil {
			if !r.emit(Event[S]{Kind: EventRoute, Step: r.step, Node: n.name, Key: sendKey, To: s.To}) {
				return r.stopped()
			}
		}
		q := r.queue()
		q.nextSends = append(q.nextSends, sendTask[S]{node: t, in: s.Input})
	}
	return nil
}

// sendKey is the Key of the EventRoute reporting a Send, and the label of
// send edges in drawings.
const sendKey = "send"

// routeSends follows the edges of the nodes the step's Sends ran, each node
// once, after counting every task.
func (r *run[S]) routeSends() error {
	routed := make([]bool, len(r.g.nodes))
	for _, i := range r.frontier {
		routed[i] = true
	}
	for j, t := range r.sendList() {
		r.counters[t.node]++
		if sl := &r.slots[len(r.frontier)+j]; sl.handled {
			if err := r.fallBack(r.g.nodes[t.node], sl.err); err != nil {
				return err
			}
			continue
		}
		n := r.g.nodes[t.node]
		if !routed[t.node] {
			// The node's fan-out first: a Command's Sends are queued
			// after it, as for a node of the frontier.
			routed[t.node] = true
			if err := r.route(n); err != nil {
				return err
			}
		}
		if n.cmd != nil {
			if err := r.gotoFrom(n, &r.slots[len(r.frontier)+j]); err != nil {
				return err
			}
		}
	}
	return nil
}

// numberSends sets the seq of the step's tasks: each task of a node gets an
// execution count of its own (a subgraph's thread is named after it), in
// slot order, as routeSends will count them.
func (r *run[S]) numberSends() {
	before := make([]int, len(r.g.nodes))
	for i := range r.slots {
		idx := r.taskNode(i).idx
		r.slots[i].nctx.info.seq = before[idx]
		before[idx]++
	}
}

// taskNode returns the node of slot i: a node of the frontier, then one
// task per Send.
func (r *run[S]) taskNode(i int) *node[S] {
	if nf := len(r.frontier); i >= nf {
		return r.g.nodes[r.sendList()[i-nf].node]
	}
	return r.g.nodes[r.frontier[i]]
}

// Reserved pending-write names: the input of a pending Send (followed by
// the node's name) and the update of a Send task that finished in a step
// that failed (followed by the task's index in the step).
const (
	sendRecord = "__send__:"
	sentRecord = "__sent__:"
)

// taskName is the name of slot i's update in pending writes.
func (r *run[S]) taskName(i int) string {
	if nf := len(r.frontier); i >= nf {
		return sentRecord + strconv.Itoa(i-nf)
	}
	return r.g.name(r.frontier[i])
}

// taskNames returns the names of the frontier next and of the pending
// Sends, sorted: a checkpoint's Next.
func (r *run[S]) taskNames(next []int) []string {
	if len(r.sendList()) == 0 {
		return r.nextNames(next)
	}
	out := r.names(next)
	for _, t := range r.sendList() {
		out = append(out, r.g.nodes[t.node].name)
	}
	slices.Sort(out)
	return out
}

// sendRecords encodes the pending Sends for a checkpoint, in order.
func (r *run[S]) sendRecords(keep bool) ([]PendingWrite, error) {
	out := make([]PendingWrite, 0, len(r.sendList()))
	for _, t := range r.sendList() {
		pw := PendingWrite{Node: sendRecord + r.g.nodes[t.node].name}
		if keep {
			pw.Value = t.in
		} else {
			b, err := r.g.codec.Marshal(t.in)
			if err != nil {
				return nil, fmt.Errorf("statgraph: encode the input sent to node %q: %w", pw.Node[len(sendRecord):], err)
			}
			pw.Update = b
		}
		out = append(out, pw)
	}
	return out, nil
}

// loadSend restores a pending Send saved by sendRecords.
func (r *run[S]) loadSend(c *Checkpoint, pw PendingWrite) error {
	name := pw.Node[len(sendRecord):]
	i, ok := r.g.byName[name]
	if !ok {
		return fmt.Errorf("%w: thread %q checkpoint %d: a pending Send names node %q, which the graph does not have", ErrCorruptCheckpoint, c.Thread, c.ID, name)
	}
	t := sendTask[S]{node: i}
	if v, isS := pw.Value.(S); isS && pw.Value != nil {
		t.in = v
	} else {
		v, err := r.g.codec.Unmarshal(pw.Update)
		if err != nil {
			return fmt.Errorf("%w: thread %q checkpoint %d: the input sent to node %q: %w", ErrCorruptCheckpoint, c.Thread, c.ID, name, err)
		}
		t.in = v
	}
	q := r.queue()
	q.sends = append(q.sends, t)
	return nil
}

// unsent returns next without one occurrence of each pending Send's node:
// the plain frontier of a checkpoint's Next.
func (r *run[S]) unsent(next []string) []string {
	if len(r.sendList()) == 0 {
		return next
	}
	left := map[string]int{}
	for _, t := range r.sendList() {
		left[r.g.nodes[t.node].name]++
	}
	var out []string
	for _, name := range next {
		if left[name] > 0 {
			left[name]--
			continue
		}
		out = append(out, name)
	}
	return out
}
