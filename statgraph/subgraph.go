package statgraph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// nsSep separates the parts of a namespace path, of a subgraph's thread and
// of the IDs of interrupts raised inside a subgraph.
const nsSep = "|"

// AddSubgraph adds a node called name that runs the compiled graph child
// (LangGraph's subgraph as a node). in maps the parent's state to the
// child's input; out maps the parent's state and the child's final state to
// the node's update (merged like any node's update).
//
// The child runs on the parent's checkpointer, whatever it was compiled
// with, under its own thread: the parent's thread, the node's name and its
// execution count on the thread, joined by "|" ("t1|review:0"). The count
// goes on across the thread's runs, replays and forks, and each Send task
// to the node has its own, so every run of the child starts afresh and
// has its own history (LangGraph's stateless subgraph, whose state resets
// on each invocation): the checkpointer lists it like any thread, and the
// child graph compiled WithCheckpointer on the same store reads it with
// State and History. When the parent has no checkpointer the child runs
// without one.
//
// An interrupt inside the child pauses the parent: the parent's
// Result.Interrupts (WithResult) lists it with the ID "name|<child's ID>"
// ("name[j]|<child's ID>" for the j-th Send task to the node in a step after the first), and WithResume
// through the parent (with a value, or a ResumeMap naming that ID) resumes
// the child where it stopped. A parent stopped while the child ran (a
// cancelled context, or a killed process) continues the child from its
// latest checkpoint when it is continued; a child that had finished is not
// run again, its final state is read back.
//
// The child's events appear in the parent's Stream and trace with
// Event.Namespace set to the path of subgraph nodes and no State; its
// EventRunStart and EventRunEnd are left out (the node's own start and end
// frame them), and so is its EventInterrupt (the parent reports the pause
// with the interrupt's full ID). Draw's mermaid and dot drawings show the
// child inside a box named after the node. Errors of the child are the node's errors: retries and timeouts
// apply to the whole child run. A retry of the node continues the child's
// run from its latest checkpoint, as LangGraph resumes a subgraph on retry:
// the child's finished steps are not run again and the failed attempt's
// partial state is not returned. An attempt abandoned at its WithTimeout
// deadline writes nothing more into the child's thread. A node of the child hands off to the
// parent with ToParent; the nodes it may go to are declared with
// WithDestinations among opts.
func AddSubgraph[P, C any](b *Builder[P], name string, child *Graph[C], in func(P) C, out func(P, C) P, opts ...NodeOption) *Builder[P] {
	if child == nil || in == nil || out == nil {
		b.problem("AddSubgraph(%q): child graph, in and out must not be nil", name)
		return b
	}
	var cfg nodeConfig
	for _, o := range opts {
		o(&cfg)
	}
	declared := len(cfg.gotos) > 0
	fn := func(ctx context.Context, p P) (P, error) {
		c, err := runSubgraph(ctx, child, in(p))
		if err != nil {
			if u, ok, herr := takeHandoff[P](ctx, name, declared, err); ok {
				return u, herr
			}
			var zero P
			return zero, err
		}
		return out(p, c), nil
	}
	return b.AddNode(name, fn, append(opts, func(c *nodeConfig) { c.sub = child })...)
}

// runSubgraph runs child as the node whose ctx is given, on the parent
// run's checkpointer and thread.
func runSubgraph[C any](ctx context.Context, child *Graph[C], input C) (C, error) {
	var zero C
	info, ok := ctx.Value(infoKey{}).(*nodeInfo)
	if !ok {
		return zero, errors.New("statgraph: a subgraph node ran outside a graph")
	}
	parent := info.cfg
	// The node's ctx is reused by the parent's next steps; what the child
	// and the store keep of a ctx (database/sql watches it after a query)
	// gets a context of its own, done when the node returns.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := child.newRun(nil)
	r.cfg.sub, r.cfg.cp, r.cfg.kinds, r.cfg.durability, r.cfg.hook, r.cfg.maxConc = true, parent.cp, parent.kinds, parent.durability, parent.hook, parent.maxConc
	if r.cfg.store == nil {
		r.cfg.store = parent.store
	}
	r.cfg.ns = info.node
	if parent.ns != "" {
		r.cfg.ns = parent.ns + nsSep + info.node
	}
	if info.sink != nil {
		// The parent's stream and trace show the child's events; the
		// child's own tracer, if any, would print them twice.
		sink, ns := info.sink, r.cfg.ns
		r.emit = func(ev Event[C]) bool {
			if ev.Kind == EventRunStart || ev.Kind == EventRunEnd || ev.Kind == EventInterrupt {
				return true
			}
			fe := retype[C, none](ev)
			if ev.Kind == EventNodeUpdate || ev.Kind == EventUpdate {
				fe.Custom = ev.State // of the child's type: the parent's State cannot hold it
			}
			if fe.Namespace == "" {
				fe.Namespace = ns
			} else {
				fe.Namespace = ns + nsSep + fe.Namespace
			}
			return sink(fe)
		}
	}
	if parent.cp == nil {
		c, err := r.start(ctx, input, nil)
		return c, raiseFromChild(info, err)
	}
	if l, ok := ctx.Value(leaseKey{}).(*lease); ok {
		// The nearest lease's chain holds the enclosing ones: wrap the
		// store once, with it.
		base := parent.cp
		if lc, ok := base.(leasedCheckpointer); ok {
			base = lc.Checkpointer
		}
		r.cfg.cp = leasedCheckpointer{base, l}
	}
	r.cfg.thread = parent.thread + nsSep + info.node + ":" + strconv.Itoa(info.count)
	latest, err := parent.cp.Get(ctx, r.cfg.thread, 0)
	switch {
	case errors.Is(err, ErrNoCheckpoint):
		c, err := r.start(ctx, input, nil)
		return c, raiseFromChild(info, err)
	case err != nil:
		return zero, fmt.Errorf("statgraph: subgraph %q: load thread %q: %w", r.cfg.ns, r.cfg.thread, err)
	case len(latest.Next) == 0:
		// The child finished before the parent could record it.
		return loadState(ctx, parent.cp, child.codec, latest)
	case len(latest.Interrupts) > 0:
		values := ResumeMap{}
		prefix := info.task() + nsSep
		for id, raw := range info.resumes {
			cid, ok := strings.CutPrefix(id, prefix)
			if ok && pendingHas(latest, cid) {
				values[cid] = json.RawMessage(raw)
			}
		}
		if len(values) == 0 {
			// Resumed for another interrupt: the child still waits.
			ints := make([]Interruption, len(latest.Interrupts))
			for i, in := range latest.Interrupts {
				ints[i] = Interruption{ID: in.ID, Node: in.Node, When: in.When, Payload: in.Payload}
			}
			return zero, raiseFromChild(info, &interruptedError{Thread: r.cfg.thread, pending: ints})
		}
		c, err := r.start(ctx, input, &resumeArg{value: values})
		return c, raiseFromChild(info, err)
	}
	c, err := r.start(ctx, input, nil) // continues the unfinished run
	return c, raiseFromChild(info, err)
}

func pendingHas(c *Checkpoint, id string) bool {
	for _, in := range c.Interrupts {
		if in.ID == id {
			return true
		}
	}
	return false
}

// raiseFromChild turns the child's pause into a pause of the parent's node:
// the child's interrupts are raised by the node, their IDs prefixed with
// its name, so that the parent saves them and WithResume finds them.
func raiseFromChild(info *nodeInfo, err error) error {
	var ie *interruptedError
	if !errors.As(err, &ie) {
		return err
	}
	ints := make([]Interruption, len(ie.pending))
	for i, in := range ie.pending {
		ints[i] = Interruption{ID: info.task() + nsSep + in.ID, Node: info.node, When: "inside", Payload: in.Payload}
	}
	info.raised = append(info.raised, ints...)
	return &interruptedError{pending: ints}
}

// drawable is a compiled graph drawn inside a subgraph node's box
// (childGraph).
type drawable interface {
	drawMermaid(b *strings.Builder, prefix, indent string)
	drawDOT(b *strings.Builder, prefix, indent string)
}

// drawMermaid writes the graph's nodes and edges with ids prefixed by
// prefix, for a subgraph block.
func (g *Graph[S]) drawMermaid(b *strings.Builder, prefix, indent string) {
	for _, n := range g.nodes {
		if n.sub != nil {
			fmt.Fprintf(b, "%ssubgraph %s[%q]\n", indent, mermaidID(prefix+n.name), n.name)
			n.sub.drawMermaid(b, prefix+n.name+"__", indent+"    ")
			fmt.Fprintf(b, "%send\n", indent)
			continue
		}
		fmt.Fprintf(b, "%s%s[%q]\n", indent, mermaidID(prefix+n.name), n.name)
	}
	for _, e := range g.edgesForDrawing() {
		if e.from == Start || e.to == End {
			continue
		}
		fmt.Fprintf(b, "%s%s --> %s\n", indent, mermaidID(prefix+e.from), mermaidID(prefix+e.to))
	}
}

// drawDOT writes the graph's nodes and edges with names prefixed by prefix,
// for a cluster.
func (g *Graph[S]) drawDOT(b *strings.Builder, prefix, indent string) {
	for _, n := range g.nodes {
		fmt.Fprintf(b, "%s%q [label=%q];\n", indent, prefix+n.name, n.name)
		if n.sub != nil {
			dotCluster(b, n.sub, prefix+n.name, indent)
		}
	}
	for _, e := range g.edgesForDrawing() {
		if e.from == Start || e.to == End {
			continue
		}
		fmt.Fprintf(b, "%s%q -> %q;\n", indent, prefix+e.from, prefix+e.to)
	}
}

// dotCluster draws subgraph sub of node name as a cluster named after it.
func dotCluster(b *strings.Builder, sub drawable, name, indent string) {
	fmt.Fprintf(b, "%ssubgraph %q {\n%s    label=%q; style=dashed;\n", indent, "cluster_"+name, indent, name)
	sub.drawDOT(b, name+nsSep, indent+"    ")
	fmt.Fprintf(b, "%s}\n", indent)
}
