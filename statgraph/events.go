package statgraph

import "time"

// EventKind says what an Event reports.
type EventKind uint8

// Event kinds, in the order they occur within a step.
const (
	EventRunStart   EventKind = iota + 1 // a run starts or resumes: Nodes is the first frontier
	EventStepStart                       // a super-step starts: Step, Nodes
	EventNodeStart                       // a node attempt starts: Node, Attempt
	EventRetry                           // a failed attempt will be retried: Node, Attempt (the failed one), Delay, Err
	EventNodeEnd                         // a node finished: Node, Attempt, Duration, Err
	EventUpdate                          // the step's updates were merged: State
	EventRoute                           // a router chose: Node (from), Key, To
	EventCheckpoint                      // a checkpoint was saved: CheckpointID
	EventInterrupt                       // the run paused: Interrupts
	EventRunEnd                          // the run ended: State, Err

	// Opt-in kinds, produced only when a Stream asks for them with
	// WithEvents (see there).
	EventNodeUpdate // one node's own update, before the merge: Node, State (the update)
	EventCustom     // a value written from inside a node with CustomWriter: Node, Custom
)

var kindNames = [...]string{"", "run_start", "step_start", "node_start", "retry", "node_end", "update", "route", "checkpoint", "interrupt", "run_end",
	"node_update", "custom"}

func (k EventKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

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
	// events carry no State: it is of the subgraph's type.
	Namespace string
	Custom    any // EventCustom: the value written, of the writer's type
}
