// Package statgraph is a typed state graph for Go, in the style of
// LangGraph: nodes that read and update a state of the caller's own type S,
// joined by edges and by conditional edges whose destinations are declared
// up front, and run in parallel super-steps.
//
// # Build, compile, run
//
// New returns a mutable Builder. AddNode, AddEdge and AddConditionalEdges
// describe the graph between the virtual nodes Start and End; mistakes are
// remembered and Compile reports them all at once in one error
// (unknown nodes, duplicate or reserved names, nodes Start cannot reach or
// that cannot reach End, ...). The compiled *Graph is immutable and safe for
// concurrent use: Invoke it, Stream its events, or Draw it (Mermaid, DOT,
// SVG).
//
// # Super-steps and state
//
// A run proceeds in super-steps. The nodes ready in a step run concurrently
// (at most n at once with WithMaxConcurrency(n)), each on the state as of the start of the step; at the barrier their
// updates are merged in node-name order, so results do not depend on
// scheduling; then every edge leaving a node that ran is followed, and the
// nodes reached form the next step (a node reached from several nodes runs
// once: that is a join). The run ends when no node is left, and fails with
// ErrStepLimit after too many steps (10,000 unless WithStepLimit says
// otherwise).
//
// A node is a function of the state that returns an update. Without a
// reducer the update replaces the state, so a node returns the whole state,
// and two nodes updating in one step is an error. With a reducer
// (SetReducer) nodes return partial updates that the reducer folds into the
// state; Append, Last and the builtin max help write one. Treat S as a value: append to
// slices rather than assigning into them, so that parallel branches and
// saved checkpoints never see each other's writes. Single-node steps run on
// the caller's goroutine and cost no allocation.
//
// # Joins, fan-out, hand-offs
//
// A node reached from several nodes runs once per step, but in the step
// after each of them; AddJoin makes it wait until all of them have run,
// whatever the lengths of their branches. AddRoutes is a router that may
// choose several destinations. AddSends fans out over a list known only at
// run time: each Send runs a node on its own input, and the updates merge in
// send order (map-reduce). AddCommandNode adds a node that returns a Command:
// its update together with where to go next, Sends included. A node can read
// RuntimeOf(ctx).RemainingSteps to wrap up before the step limit. All of it
// is saved with the checkpoints, so a resumed run keeps waiting, sending and
// going where it was.
//
// # Failures, retries, cancellation
//
// A node's error, or a panic (recovered, with its stack), ends the run with
// a *NodeError naming the node and attempt. WithRetry retries a node under a
// RetryPolicy (exponential backoff with jitter; Permanent opts an error out);
// WithTimeout bounds each attempt (a node ignoring its ctx is abandoned at
// the deadline and its result dropped). RuntimeOf(ctx)
// tells a node what it can know of its run: its Attempt, the RemainingSteps
// and, in a WithFallback handler (a node that handles another's error once
// its retries are used up), the Fallback error. Cancelling the context
// stops the run promptly: nodes get a context derived from it, and Invoke
// returns an error wrapping the context's.
//
// # Gates: retrying upstream on a failed check
//
// A retry policy reacts to errors; a gate reacts to failed checks. Gates
// live in package statgraph/gate, a layer over this package's public API:
// validators are nodes, a gate is a node followed by conditional edges
// (pass, retry, fail), and its counters are kept in the graph's state, so
// the run loop knows nothing of them.
//
// # Checkpoints, resume, interrupts, time travel
//
// Compiled WithCheckpointer, a graph saves a Checkpoint after every
// super-step, before the next one starts: the state (a delta against the
// previous checkpoint when the Codec allows it), the next nodes, and the
// updates of nodes that finished in a step where a sibling failed. A run is
// keyed by WithThread; invoking a thread whose run did not finish continues
// it from its latest checkpoint without re-running completed nodes.
// NewMemoryCheckpointer keeps checkpoints in memory; the sqlite sub-package
// stores them in an embedded SQLite file and the postgres sub-package in a
// PostgreSQL database that several processes share. All three pass one
// conformance suite, checkpoint/checkpointtest, which a new store can run.
//
// Interrupt pauses a run from inside a node and Resume (or WithResume on
// Stream) continues it with a value; WithInterruptBefore and
// WithInterruptAfter pause around nodes. History lists a thread's snapshots, FromCheckpoint replays from any of
// them, and UpdateState (with FromCheckpoint, at any of them) forks a thread
// with an edited state. WithDurability chooses when checkpoints are
// written: before the next step (sync), while it runs (async), or only when
// the run stops (exit).
//
// # Subgraphs and caching
//
// AddSubgraph makes a compiled graph of another state type a node, with
// typed functions mapping the parent's state in and the child's result
// back. The child checkpoints under a namespace of the parent's thread; an
// interrupt inside it pauses the parent, WithResume through the parent resumes
// it, and its events reach the parent's stream. WithCache caches a node's
// update for a TTL, keyed by a function of its input or by the encoded input,
// in a store of package statgraph/cache's Cache seam (bounded in memory, or
// SQLite in package checkpoint/sqlite) that can be cleared.
//
// # Observing a run
//
// Stream yields the run's events (steps, node starts and ends with
// durations and attempts, merged updates, routes taken, retries,
// checkpoints, interrupts) as an iter.Seq2; breaking out of the loop cancels
// the run. WithTrace, or STATGRAPH_TRACE=1 in the environment, prints a
// readable tree of the run, one line per event. When nobody listens, events
// cost nothing. WithEvents picks the kinds a Stream yields, among them the
// opt-in EventNodeUpdate (each node's own update) and EventCustom (values a
// node writes with RuntimeOf(ctx).Write: progress, tokens).
package statgraph
