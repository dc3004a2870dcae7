package statgraph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ToParent returns the error with which a node inside a subgraph hands off
// to its parent graph (LangGraph's Command(graph=Command.PARENT,
// update=..., goto=...)): the node returns it as its error, and
//
//   - the child's run stops at the end of the node's step (the updates of
//     its siblings in that step are saved, as for any failed step, and not
//     merged); the node is not retried and no WithFallback handles it;
//   - in the parent, c.Update becomes the subgraph node's update, merged
//     through the parent's reducer (AddSubgraph's out is not called);
//   - the parent runs every node of c.Goto next, besides the subgraph node's
//     own edges, and queues c.Sends for its next step. The subgraph node
//     declares their nodes with WithDestinations; a name outside them ends
//     the run with an error naming it and the declared ones.
//
// P must be the state type of the graph the subgraph node belongs to (the
// immediate parent); another type fails the parent's node with an error
// naming both types. Returned outside a subgraph, it ends the run as a
// *NodeError saying so. When two nodes of one child step hand off, the
// first in node order wins.
//
// The hand-off is checkpointed like any node's update: a parent resumed
// after a crash runs c.Goto without running the child again once the
// parent's step was saved; a crash before that runs the handing-off node
// again (and only it, of its step).
func ToParent[P any](c Command[P]) error { return &handoff[P]{cmd: c} }

// handoff is the error ToParent returns; AddSubgraph's node takes it.
type handoff[P any] struct{ cmd Command[P] }

func (h *handoff[P]) Error() string {
	return fmt.Sprintf("statgraph: ToParent(goto %s) reached no parent graph: the node's graph does not run as a subgraph (AddSubgraph) of a graph whose state is %s; return ToParent only from a subgraph's nodes",
		strings.Join(h.cmd.Goto, ", "), typeName[P]())
}

func (h *handoff[P]) parentState() string { return typeName[P]() }

// handingOff is a handoff of any parent state type.
type handingOff interface {
	error
	parentState() string
}

// isHandoff reports whether err carries a ToParent hand-off.
func isHandoff(err error) bool {
	var h handingOff
	return errors.As(err, &h)
}

// takeHandoff turns the hand-off in the child's error err into the update
// of subgraph node name and its Goto. ok is false when err carries none;
// herr is set when the hand-off cannot be taken.
func takeHandoff[P any](ctx context.Context, name string, declared bool, err error) (update P, ok bool, herr error) {
	var h handingOff
	if !errors.As(err, &h) {
		return update, false, nil
	}
	hp, same := h.(*handoff[P])
	if !same {
		return update, true, fmt.Errorf("statgraph: a node inside subgraph node %q returned ToParent with a Command[%s], but the parent graph's state is %s; give ToParent the state type of the graph that holds the subgraph node",
			name, h.parentState(), typeName[P]())
	}
	if len(hp.cmd.Goto) > 0 || len(hp.cmd.Sends) > 0 {
		if !declared {
			to := hp.cmd.Goto
			for _, s := range hp.cmd.Sends {
				to = append(slices.Clip(to), s.To)
			}
			return update, true, fmt.Errorf("statgraph: a node inside subgraph node %q handed off to %s with ToParent, but the node declares no destinations; add WithDestinations(%q) to AddSubgraph(%q)",
				name, strings.Join(to, ", "), to[0], name)
		}
		if info, ok := ctx.Value(infoKey{}).(*nodeInfo); ok {
			if info.extra == nil {
				info.extra = &taskExtra{}
			}
			info.extra.gotos = hp.cmd.Goto
			if len(hp.cmd.Sends) > 0 {
				info.extra.sends = hp.cmd.Sends
			}
		}
	}
	return hp.cmd.Update, true, nil
}

// typeName names type T for error messages.
func typeName[T any]() string {
	return fmt.Sprintf("%T", (*T)(nil))[1:]
}
