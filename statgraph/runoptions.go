package statgraph

import (
	"context"
	"io"

	"github.com/statgraph/statgraph/statgraph/store"
)

// RunOption configures one Invoke, Stream or UpdateState call.
type RunOption func(*runConfig)

type runConfig struct {
	thread    string
	stepLimit int
	maxConc   int            // WithMaxConcurrency without nodes; 0: no bound
	nodeConc  map[string]int // WithMaxConcurrency with nodes: node -> bound; nil: none
	trace     io.Writer
	from      int64 // checkpoint to replay from; 0 = latest
	// kinds lists the event kinds a Stream yields; nil means the default
	// set (streammode.go).
	kinds []EventKind
	// cp is the run's checkpointer once the run opened. For the run of a
	// subgraph (subgraph.go) sub makes cp, the parent's, the run's
	// checkpointer in place of the graph's own, and ns is the subgraph's
	// namespace path.
	sub bool
	cp  Checkpointer
	ns  string
	// store is the run's long-term store: the graph's (WithStore), else,
	// in a subgraph's run, its parent's.
	store store.Store
	// durability says when checkpoints are written (durability.go).
	durability Durability
	// hook is called around each node attempt (nodehook.go); nil: none.
	hook func(ctx context.Context, node string, step, attempt int) (context.Context, func(error))
	// call holds what WithResume and WithResult set; nil when neither
	// was given, so that plain runs stay small.
	call *callOpts
}

// callOpts are the run options that change how a run starts or what it
// reports. result holds a *Result[S] of the graph's S, checked when the
// run starts.
type callOpts struct {
	resume *resumeArg
	result any
}

func (c *runConfig) calls() *callOpts {
	if c.call == nil {
		c.call = &callOpts{}
	}
	return c.call
}

// WithThread names the run's thread. On a graph with a checkpointer the
// thread keys its checkpoints and keeps its state across runs:
//
//   - a thread whose last run finished starts a new run from Start, with the
//     input merged into the thread's state through the reducer (a chat's
//     next message); without a reducer the input replaces the state;
//   - a thread with an unfinished run (a node failed, or the process
//     stopped) is continued from its latest checkpoint: with a reducer the
//     input is merged into the checkpoint's state first (so a zero input
//     changes nothing); without one the input is ignored, as there is no way
//     to merge it, and the checkpoint's state is kept;
//   - a thread paused at an interrupt is an error wrapping ErrInterrupted:
//     continue it with WithResume, or dismiss the pause with UpdateState.
func WithThread(id string) RunOption { return func(c *runConfig) { c.thread = id } }

// WithStepLimit ends the run with ErrStepLimit after n super-steps. Without
// it, or with n <= 0, a run may take 10,000 super-steps.
func WithStepLimit(n int) RunOption { return func(c *runConfig) { c.stepLimit = n } }

// WithMaxConcurrency runs at most n of a super-step's tasks at once (nodes
// and Sends alike; LangGraph's max_concurrency): a fan-out of 1,000 Sends
// runs on n goroutines, which take the tasks in order, instead of starting
// 1,000 model calls together. The step still ends at its barrier, when all
// its tasks are done, so results, merge order and checkpoints are those of
// an unbounded run. A subgraph's run takes the same bound for its own
// steps (a bound shared with the parent could never let the child start
// while the parent's node waits for it). EventNodeStart is emitted for
// every task when the step starts, not when a goroutine takes it. Without
// it, or with n <= 0, every task of a step runs at once.
//
// Given nodes, it bounds each of them instead: at most n tasks of each
// named node run at once (a node calling a rate-limited model), while the
// step's other tasks run beside them; a step bound given too applies as
// well, and the step starts no more goroutines than can run at once. Such
// a bound is the graph's own: a subgraph's nodes are not bound by it. A
// name that is not a node of the graph fails the run before it starts.
func WithMaxConcurrency(n int, nodes ...string) RunOption {
	return func(c *runConfig) {
		if len(nodes) == 0 {
			c.maxConc = n
			return
		}
		if c.nodeConc == nil {
			c.nodeConc = map[string]int{}
		}
		for _, name := range nodes {
			c.nodeConc[name] = n
		}
	}
}

// WithTrace writes a readable trace of the run to w, one line per event (the
// format STATGRAPH_TRACE=1 prints to stderr).
func WithTrace(w io.Writer) RunOption { return func(c *runConfig) { c.trace = w } }

// FromCheckpoint replays the thread from checkpoint id instead of its latest
// one (time travel): a fork checkpoint is written whose parent is id, and the
// run continues from there. Needs WithThread.
func FromCheckpoint(id int64) RunOption { return func(c *runConfig) { c.from = id } }

// WithResume continues the run's thread, which must be paused at an
// interrupt, giving value to it: Interrupt returns it inside the node that
// paused. With several
// interrupts pending, value must be a ResumeMap naming each one answered by
// ID. Needs WithThread. The input given to Stream or Invoke is ignored (pass
// the zero value): the run continues from the thread's checkpoint; Resume
// does the same for Invoke without an input. A thread that is not paused is
// an error ("statgraph: thread is not interrupted").
func WithResume(value any) RunOption {
	return func(c *runConfig) { c.calls().resume = &resumeArg{value: value} }
}

// WithResult makes the run fill *res, when it stops, with the final state
// and, when it paused, the pending interrupts; on error *res holds what the
// run reached. With Stream, *res is filled before the last
// event is yielded. res must be a *Result of the graph's state type;
// another type fails the run before it starts.
func WithResult[S any](res *Result[S]) RunOption {
	return func(c *runConfig) { c.calls().result = res }
}
