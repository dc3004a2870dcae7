package statgraph

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Command is what a command node returns (see AddCommandNode): its update
// together with where the run goes next. A node inside a subgraph hands a
// Command of its parent's state type to the parent with ToParent.
type Command[S any] struct {
	Update S        // merged like any node's update
	Goto   []string // nodes (or End) to run next, each declared at AddCommandNode
	// Sends are tasks for the next step, each a declared node run on its
	// own input (LangGraph's Command(goto=[Send(...)])), queued after the
	// Sends of the node's fan-out (AddSends) and merged in this order.
	Sends []Send[S]
}

// AddCommandNode adds a node that decides where the run goes next together
// with its update (LangGraph's Command(update=..., goto=...)), for hand-offs
// between agents without a separate router. After the node's step the run
// follows the node's edges and every node in the returned Goto, and queues
// the returned Sends for the next step (a Send to a node the step reaches
// by an edge as well runs besides it: the node runs twice).
//
// destinations declares every node (or End) the node may go to: Compile
// checks they exist and draws them as dashed edges, and a Goto or a Send
// outside them (or a Send to End) ends the run with an error naming it and
// the declared ones. When a sibling fails in the same step, the node's
// Goto and Sends are saved with its update, so a resumed run goes the same
// way without running the node again. opts are as for AddNode.
func (b *Builder[S]) AddCommandNode(name string, fn func(ctx context.Context, s S) (Command[S], error), destinations []string, opts ...NodeOption) *Builder[S] {
	if fn == nil {
		b.problem("AddCommandNode(%q): nil function", name)
		return b
	}
	if len(destinations) == 0 {
		b.problem("AddCommandNode(%q): no destinations; declare every node the command may go to", name)
		return b
	}
	opts = append(opts, func(c *nodeConfig) {
		c.gotos, c.command = append(c.gotos, destinations...), true
	})
	b.AddNode(name, func(ctx context.Context, s S) (S, error) {
		c, err := fn(ctx, s)
		if info, ok := ctx.Value(infoKey{}).(*nodeInfo); ok && err == nil {
			if info.extra == nil {
				info.extra = &taskExtra{}
			}
			info.extra.gotos = c.Goto
			if len(c.Sends) > 0 {
				info.extra.sends = c.Sends
			}
		}
		return c.Update, err
	}, opts...)
	return b
}

// WithDestinations declares the nodes of the graph (or End) that a subgraph
// node's child may hand off to with ToParent (LangGraph's
// add_node(..., destinations=...)). Compile checks that they exist, counts
// them as edges of the node (so a node reached only by the hand-off is not
// unreachable) and draws them as dashed edges; a hand-off to a node outside
// them ends the run with an error naming it and the declared ones. On AddCommandNode it adds to the
// destinations given there; on any other node Compile reports it.
func WithDestinations(names ...string) NodeOption {
	return func(c *nodeConfig) { c.gotos = append(c.gotos, names...) }
}

// commandTo is a command node's declared destinations.
type commandTo struct {
	to    map[string]int // name -> node index or endIdx
	names []string       // sorted
}

// compileCommands resolves the declared destinations of command nodes and
// subgraph nodes.
func (g *Graph[S]) compileCommands(b *Builder[S], resolve func(string) (int, bool), add func(string, ...any)) {
	for _, n := range g.nodes {
		cfg := &b.nodes[n.name].cfg
		if cfg.gotos == nil {
			continue
		}
		where := "AddCommandNode"
		if !cfg.command {
			where = "WithDestinations"
			if cfg.sub == nil {
				add("%s on node %q: only command nodes (AddCommandNode) and subgraph nodes (AddSubgraph) go to other nodes; remove the option", where, n.name)
				continue
			}
		}
		c := &commandTo{to: make(map[string]int, len(cfg.gotos))}
		for _, name := range cfg.gotos {
			i, ok := resolve(name)
			if !ok || i == startIdx {
				add("%s(%q): destination %q is not a node of the graph", where, n.name, name)
				continue
			}
			if _, dup := c.to[name]; !dup {
				c.to[name] = i
				c.names = append(c.names, name)
			}
		}
		slices.Sort(c.names)
		n.cmd = c
	}
}

// gotoFrom follows the Goto that command node n returned in slot sl.
func (r *run[S]) gotoFrom(n *node[S], sl *slot[S]) error {
	for _, name := range sl.nctx.info.gotoList() {
		t, ok := n.cmd.to[name]
		if !ok && n.sub != nil {
			return fmt.Errorf("%w: a node inside subgraph node %q handed off to %q with ToParent; the node's declared destinations are %s (WithDestinations at AddSubgraph)",
				errUnknownRoute, n.name, name, strings.Join(n.cmd.names, ", "))
		}
		if !ok {
			return fmt.Errorf("%w: command node %q went to %q; its declared destinations are %s (AddCommandNode)",
				errUnknownRoute, n.name, name, strings.Join(n.cmd.names, ", "))
		}
		if r.emit != nil {
			if !r.emit(Event[S]{Kind: EventRoute, Step: r.step, Node: n.name, Key: gotoKey, To: name}) {
				return r.stopped()
			}
		}
		r.add(t)
	}
	sends, _ := sl.nctx.info.sendList().([]Send[S])
	for _, s := range sends {
		t, ok := n.cmd.to[s.To]
		if !ok || t == endIdx {
			return fmt.Errorf("%w: node %q sent to %q with a Command; its declared destinations are %s",
				errUnknownRoute, n.name, s.To, strings.Join(slices.DeleteFunc(slices.Clone(n.cmd.names), func(d string) bool { return d == End }), ", "))
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

// gotoKey is the Key of the EventRoute reporting a Command's Goto.
const gotoKey = "goto"

// gotoRecord prefixes the pending-write entry that saves the Goto of a
// command node that finished in a step that failed; the task's name
// follows.
const gotoRecord = "__goto__:"

// gotoWrite returns the pending-write entry for slot i's Goto and Sends,
// if any: a JSON list of the Goto's names, or, when the command also sent,
// a gotoSaved object with the Sends' inputs encoded by the graph's codec.
func (r *run[S]) gotoWrite(i int) (PendingWrite, bool, error) {
	info := &r.slots[i].nctx.info
	gotos := info.gotoList()
	sends, _ := info.sendList().([]Send[S])
	if len(gotos) == 0 && len(sends) == 0 {
		return PendingWrite{}, false, nil
	}
	pw := PendingWrite{Node: gotoRecord + r.taskName(i)}
	if len(sends) == 0 {
		pw.Update, _ = json.Marshal(gotos) // strings always encode
		return pw, true, nil
	}
	saved := gotoSaved{Goto: gotos, Sends: make([]sentSaved, len(sends))}
	for k, s := range sends {
		b, err := r.g.codec.Marshal(s.Input)
		if err != nil {
			return pw, false, fmt.Errorf("statgraph: encode the input node %q sent to %q: %w", info.node, s.To, err)
		}
		saved.Sends[k] = sentSaved{To: s.To, Input: b}
	}
	pw.Update, _ = json.Marshal(saved) // strings and bytes always encode
	return pw, true, nil
}

// gotoSaved is a saved Command's Goto with its Sends.
type gotoSaved struct {
	Goto  []string    `json:"goto,omitempty"`
	Sends []sentSaved `json:"sends"`
}

// sentSaved is one saved Send of a Command: its input encoded by the
// graph's codec.
type sentSaved struct {
	To    string `json:"to"`
	Input []byte `json:"input"`
}

// restoreGoto sets slot i's Goto and Sends from a pending-write entry saved
// by gotoWrite, reporting whether pw was one for slot i.
func (r *run[S]) restoreGoto(i int, pw PendingWrite) bool {
	if !strings.HasPrefix(pw.Node, gotoRecord) || pw.Node[len(gotoRecord):] != r.taskName(i) {
		return false
	}
	x := &taskExtra{}
	var saved gotoSaved
	if json.Unmarshal(pw.Update, &x.gotos) != nil && json.Unmarshal(pw.Update, &saved) == nil {
		x.gotos = saved.Goto
		sends := make([]Send[S], 0, len(saved.Sends))
		for _, s := range saved.Sends {
			if in, err := r.g.codec.Unmarshal(s.Input); err == nil {
				sends = append(sends, Send[S]{To: s.To, Input: in})
			}
		}
		x.sends = sends
	}
	r.slots[i].nctx.info.extra = x
	return true
}
