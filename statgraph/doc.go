// Package statgraph is a typed state graph for Go, in the style of
// LangGraph: nodes that read and update a state of the caller's own type S,
// joined by edges and by conditional edges whose destinations are declared
// up front, and run in parallel super-steps.
//
// # Build, compile, run
//
// New returns a mutable Builder. AddNode, AddEdge and AddConditionalEdges
// describe the graph between the virtual nodes Start and End; mistakes are
// remembered and Compile reports them all at once in a *CompileError
// (unknown nodes, duplicate or reserved names, nodes Start cannot reach or
// that cannot reach End, ...). The compiled *Graph is immutable and safe for
// concurrent use: Invoke it, Stream its events, or draw it (Mermaid, DOT).
//
// # Super-steps and state
//
// A run proceeds in super-steps. The nodes ready in a step run concurrently,
// each on the state as of the start of the step; at the barrier their
// updates are merged in node-name order, so results do not depend on
// scheduling; then every edge leaving a node that ran is followed, and the
// nodes reached form the next step (a node reached from several nodes runs
// once: that is a join). The run ends when no node is left, and fails with
// ErrStepLimit after too many steps (DefaultStepLimit, or WithStepLimit).
//
// A node is a NodeFunc: it returns an update. Without a reducer the update
// replaces the state, so a node returns the whole state, and two nodes
// updating in one step is an error (ErrConflictingUpdates). With a Reducer
// (SetReducer) nodes return partial updates that the reducer folds into the
// state; Append, Last and Max help write one. Treat S as a value: append to
// slices rather than assigning into them, so that parallel branches and
// saved checkpoints never see each other's writes. Single-node steps run on
// the caller's goroutine and cost no allocation.
//
// # Failures, retries, cancellation
//
// A node's error, or a panic (recovered, with its stack), ends the run with
// a *NodeError naming the node and attempt. WithRetry retries a node under a
// RetryPolicy (exponential backoff with jitter; Permanent opts an error out);
// WithTimeout bounds each attempt; Attempt tells a node which attempt it is.
// Cancelling the context stops the run promptly: nodes get a context derived
// from it, and Invoke returns an error wrapping the context's.
//
// # Checkpoints, resume, interrupts, time travel
//
// Compiled WithCheckpointer, a graph saves a Checkpoint after every
// super-step, before the next one starts: the state (a delta against the
// previous checkpoint when the Codec allows it), the next nodes, and the
// updates of nodes that finished in a step where a sibling failed. A run is
// keyed by WithThread; invoking a thread whose run did not finish continues
// it from its latest checkpoint without re-running completed nodes.
// MemoryCheckpointer keeps checkpoints in memory; the sqlite sub-package
// stores them in an embedded SQLite file.
//
// Interrupt pauses a run from inside a node and Resume continues it with a
// value; WithInterruptBefore and WithInterruptAfter pause around nodes.
// History lists a thread's snapshots, FromCheckpoint replays from any of
// them, and UpdateState forks a thread with an edited state.
//
// # Observing a run
//
// Stream yields the run's events (steps, node starts and ends with
// durations and attempts, merged updates, routes taken, retries,
// checkpoints, interrupts) as an iter.Seq2; breaking out of the loop cancels
// the run. WithTrace, or STATGRAPH_TRACE=1 in the environment, prints a
// readable tree of the run, one line per event. When nobody listens, events
// cost nothing.
package statgraph
