package statgraph

import (
	"errors"
	"fmt"
)

// Sentinel errors. Errors returned by the package wrap these; test for them
// with errors.Is.
var (
	// ErrStepLimit ends a run that took more super-steps than its limit
	// (WithStepLimit, default 10,000). The error names the nodes
	// that were still active, which are the nodes of the loop.
	ErrStepLimit = errors.New("statgraph: step limit reached")
	// ErrInterrupted is wrapped by the error of Invoke (and Stream's last
	// event) when the run paused at an interrupt. The pauses are listed by
	// WithResult's Result.Interrupts, and by the error itself: it has a
	// method Interrupts() []Interruption, which errors.As reaches with a
	// target of type interface{ Interrupts() []Interruption } (as net.Error's
	// Timeout is reached). Continue the run with WithResume.
	ErrInterrupted = errors.New("statgraph: run interrupted")
	// ErrNoCheckpoint is returned by a Checkpointer's Get when the thread or
	// checkpoint does not exist.
	ErrNoCheckpoint = errors.New("statgraph: no such checkpoint")
	// ErrCorruptCheckpoint is returned when a stored checkpoint cannot be
	// decoded; the error names the thread and checkpoint id.
	ErrCorruptCheckpoint = errors.New("statgraph: corrupt checkpoint")
)

// Errors the package returns for mistakes in a graph or in a call. They are
// unexported: their text says what to fix, and a program has nothing to
// decide by testing for them.
var (
	// errUnknownRoute ends a run whose router (or command, or fan-out)
	// chose a key that is not among its declared destinations.
	errUnknownRoute = errors.New("statgraph: router returned a key outside its path map")
	// errConflictingUpdates ends a run in which two nodes of one super-step
	// returned updates and the graph has no reducer to merge them.
	errConflictingUpdates = errors.New("statgraph: parallel updates with no reducer")
	// errNotInterrupted is returned by a run WithResume on a thread that is
	// not waiting at an interrupt.
	errNotInterrupted = errors.New("statgraph: thread is not interrupted")
	// errNoCheckpointer is returned when a feature that needs saved state
	// (threads, interrupts, history) is used on a graph compiled without a
	// Checkpointer.
	errNoCheckpointer = errors.New("statgraph: no checkpointer configured")
)

// NodeError is the error of a node that failed: its last attempt returned
// an error, timed out, or panicked. Reach it with errors.As.
type NodeError struct {
	Node    string
	Attempt int   // the attempt that failed, 1 for the first
	Err     error // what the node returned; nil when it panicked
	// Panic and Stack are set when the node panicked: the value given to
	// panic and the goroutine's stack at that point.
	Panic any
	Stack []byte
}

func (e *NodeError) Error() string {
	if e.Panic != nil {
		return fmt.Sprintf("statgraph: node %q attempt %d panicked: %v", e.Node, e.Attempt, e.Panic)
	}
	return fmt.Sprintf("statgraph: node %q attempt %d: %v", e.Node, e.Attempt, e.Err)
}

func (e *NodeError) Unwrap() error { return e.Err }
