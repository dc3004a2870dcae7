package statgraph

import (
	"context"
	"fmt"
	"time"
)

// EventKind says what an Event reports. Its values are readable names
// ("run_start", "node_end", ...), so a kind prints and compares as itself.
type EventKind string

// Event kinds, in the order they occur within a step.
const (
	EventRunStart   EventKind = "run_start"  // a run starts or resumes: Nodes is the first frontier
	EventStepStart  EventKind = "step_start" // a super-step starts: Step, Nodes
	EventNodeStart  EventKind = "node_start" // a node attempt starts: Node, Attempt
	EventRetry      EventKind = "retry"      // a failed attempt will be retried: Node, Attempt (the failed one), Delay, Err
	EventNodeEnd    EventKind = "node_end"   // a node finished: Node, Attempt, Duration, Err
	EventUpdate     EventKind = "update"     // the step's updates were merged: State
	EventRoute      EventKind = "route"      // a router chose: Node (from), Key, To
	EventCheckpoint EventKind = "checkpoint" // a checkpoint was saved: CheckpointID
	EventInterrupt  EventKind = "interrupt"  // the run paused: Interrupts
	EventRunEnd     EventKind = "run_end"    // the run ended: State, Err

	// Opt-in kinds, produced only when a Stream asks for them with
	// WithEvents (see there).
	EventNodeUpdate EventKind = "node_update" // one node's own update, before the merge: Node, State (the update)
	EventCustom     EventKind = "custom"      // a value written from inside a node with Runtime.Write: Node, Custom
)

// Event is one thing that happened during a run, as delivered by Stream and
// written by the tracer. Which fields are set depends on Kind.
type Event[S any] struct {
	Kind         EventKind
	Step         int      // the super-step, 1 for the first
	Nodes        []string // EventRunStart, EventStepStart: the frontier (shared: do not modify)
	Node         string
	Attempt      int
	Duration     time.Duration
	Delay        time.Duration // EventRetry: the pause before the next attempt
	Err          error
	Key, To      string // EventRoute
	State        S      // EventUpdate, EventRunEnd
	CheckpointID int64
	Interrupts   []Interruption
	Thread       string
	// Namespace is "" for the graph's own events and the path of subgraph
	// nodes ("outer|inner") for events of a subgraph run inside it. Such
	// events carry no State, which is of the subgraph's type: an
	// EventNodeUpdate or EventUpdate of a subgraph carries the child's
	// update or state in Custom instead (LangGraph's subgraph updates).
	Namespace string
	// Cached is, for EventNodeEnd, whether the node's update came from its
	// WithCache cache: the node's function did not run.
	Cached bool
	// Custom is, for EventCustom, the value written, of the writer's type;
	// for a subgraph's EventNodeUpdate and EventUpdate, the child's state
	// (type-assert it to the subgraph's state type).
	Custom any
}

// emitStart reports the start of the run.
func (r *run[S]) emitStart() {
	if r.emit != nil {
		r.emit(Event[S]{Kind: EventRunStart, Step: r.step, Nodes: r.names(r.frontier), Thread: r.cfg.thread})
	}
}

// names returns the names of the nodes idx.
func (r *run[S]) names(idx []int) []string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = r.g.name(j)
	}
	return out
}

// stopped is the error of a run whose event consumer stopped listening.
func (r *run[S]) stopped() error {
	return fmt.Errorf("statgraph: run stopped at step %d: %w", r.step, context.Canceled)
}
