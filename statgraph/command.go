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
}

// AddCommandNode adds a node that decides where the run goes next together
// with its update (LangGraph's Command(update=..., goto=...)), for hand-offs
// between agents without a separate router. After the node's step the run
// follows the node's edges and every node in the returned Goto.
//
// destinations declares every node (or End) the node may go to: Compile
// checks they exist and draws them as dashed edges, and a Goto outside them
// ends the run with an error naming it and the declared ones. When a sibling fails in the same step,
// the node's Goto is saved with its update, so a resumed run goes the same
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
	return nil
}

// gotoKey is the Key of the EventRoute reporting a Command's Goto.
const gotoKey = "goto"

// gotoRecord prefixes the pending-write entry that saves the Goto of a
// command node that finished in a step that failed; the task's name
// follows.
const gotoRecord = "__goto__:"

// gotoWrite returns the pending-write entry for slot i's Goto, if any.
func (r *run[S]) gotoWrite(i int) (PendingWrite, bool) {
	gotos := r.slots[i].nctx.info.gotoList()
	if len(gotos) == 0 {
		return PendingWrite{}, false
	}
	b, _ := json.Marshal(gotos) // strings always encode
	return PendingWrite{Node: gotoRecord + r.taskName(i), Update: b}, true
}

// restoreGoto sets slot i's Goto from a pending-write entry saved by
// gotoWrite, reporting whether pw was one for slot i.
func (r *run[S]) restoreGoto(i int, pw PendingWrite) bool {
	if !strings.HasPrefix(pw.Node, gotoRecord) || pw.Node[len(gotoRecord):] != r.taskName(i) {
		return false
	}
	var gotos []string
	if json.Unmarshal(pw.Update, &gotos) == nil {
		r.slots[i].nctx.info.extra = &taskExtra{gotos: gotos}
	}
	return true
}
