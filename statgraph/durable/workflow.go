package durable

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"sync"

	"github.com/statgraph/statgraph/statgraph"
)

// ErrNondeterministic is wrapped by the error of a task call that does not
// match the run being replayed: another task, or the same task with another
// input, was called at that point when the run was first made. The call's
// Future and the run fail with it; the run's records are kept, so that the
// run continues once the entrypoint calls what it called before.
var ErrNondeterministic = errors.New("durable: the entrypoint did not call the tasks of the run it replays")

// State is the state of a workflow's thread: the run's input, its output
// once the entrypoint returned, and the name of the thread that holds the
// run's task records (see the package doc). Read it with the Graph's State
// and History.
type State[In, Out any] struct {
	In  In
	Out Out
	Run string
}

// Workflow runs an entrypoint durably on a checkpointer. It is immutable
// and safe for concurrent use by runs of different threads.
type Workflow[In, Out any] struct {
	name string
	cp   statgraph.Checkpointer
	g    *statgraph.Graph[State[In, Out]]
}

// New returns the workflow called name (the name of its graph's one node)
// that runs entrypoint on cp, which may be any statgraph.Checkpointer.
// The entrypoint receives the run's input and a ctx to call tasks with;
// its error fails the run, which can be run again (finished tasks replay).
func New[In, Out any](name string, cp statgraph.Checkpointer, entrypoint func(ctx context.Context, in In) (Out, error)) (*Workflow[In, Out], error) {
	if cp == nil {
		return nil, fmt.Errorf("durable: workflow %q needs a checkpointer to record its tasks: pass statgraph.NewMemoryCheckpointer(false) or a store", name)
	}
	if entrypoint == nil {
		return nil, fmt.Errorf("durable: workflow %q has a nil entrypoint", name)
	}
	w := &Workflow[In, Out]{name: name, cp: cp}
	g, err := statgraph.New[State[In, Out]]().
		AddNode(name, func(ctx context.Context, s State[In, Out]) (State[In, Out], error) {
			out, err := w.run(ctx, s, entrypoint)
			if err != nil {
				return s, err
			}
			s.Out = out
			return s, nil
		}).
		AddEdge(statgraph.Start, name).AddEdge(name, statgraph.End).
		Compile(statgraph.WithCheckpointer(cp))
	if err != nil {
		return nil, fmt.Errorf("durable: workflow %q: %w", name, err)
	}
	w.g = g
	return w, nil
}

// Graph returns the workflow's compiled graph, for State, History and
// UpdateState on its threads.
func (w *Workflow[In, Out]) Graph() *statgraph.Graph[State[In, Out]] { return w.g }

// Invoke runs the workflow on thread: a new run with input in when the
// thread is new or its last run finished; otherwise the thread's unfinished
// run continues (in is ignored), replaying its finished tasks. It returns
// the entrypoint's output, or an error: one wrapping
// statgraph.ErrInterrupted when the run paused (continue it with Resume),
// ErrNondeterministic, or the entrypoint's own error. opts are
// statgraph's run options (WithDurability, WithTrace, WithResult...);
// WithThread is set from thread.
func (w *Workflow[In, Out]) Invoke(ctx context.Context, thread string, in In, opts ...statgraph.RunOption) (Out, error) {
	s, err := w.g.Invoke(ctx, w.input(thread, in), append(opts, statgraph.WithThread(thread))...)
	return s.Out, err
}

// Resume continues thread, paused at an Interrupt, giving value to it (a
// statgraph.ResumeMap answers several by ID). It returns what Invoke
// returns.
func (w *Workflow[In, Out]) Resume(ctx context.Context, thread string, value any, opts ...statgraph.RunOption) (Out, error) {
	s, err := w.g.Resume(ctx, value, append(opts, statgraph.WithThread(thread))...)
	return s.Out, err
}

// Stream is Invoke as a stream of the graph's events (statgraph's Stream):
// the entrypoint node's start and end, its checkpoints and pauses, and the
// values the entrypoint writes with statgraph.RuntimeOf(ctx).Write (a task's ctx
// is that of its own graph, whose events are not streamed). Breaking out
// of the loop cancels the run. Pass statgraph.WithResume among opts to
// stream a resumed run.
func (w *Workflow[In, Out]) Stream(ctx context.Context, thread string, in In, opts ...statgraph.RunOption) iter.Seq2[statgraph.Event[State[In, Out]], error] {
	return w.g.Stream(ctx, w.input(thread, in), append(opts, statgraph.WithThread(thread))...)
}

// input is the state a new run of thread starts from: in, and a records
// thread of its own, so that a finished thread's next run replays nothing
// of the last.
func (w *Workflow[In, Out]) input(thread string, in In) State[In, Out] {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return State[In, Out]{In: in, Run: thread + "|tasks:" + hex.EncodeToString(b[:])}
}

// execution is one execution of an entrypoint: what its task calls need.
// Calls, replays and interrupts are serialised by mu.
type execution struct {
	wf     string
	node   context.Context // the workflow node's ctx, where interrupts are raised
	rec    *records
	tasks  sync.WaitGroup // the tasks started by this execution
	mu     sync.Mutex     // guards calls, and orders interrupts
	calls  int            // task calls so far
	cancel context.CancelFunc
}

type execKey struct{}

// run executes the entrypoint on s.In, and waits for every task it
// started: a task still running when the entrypoint returns is cancelled.
func (w *Workflow[In, Out]) run(ctx context.Context, s State[In, Out], entrypoint func(context.Context, In) (Out, error)) (Out, error) {
	var zero Out
	if s.Run == "" {
		return zero, statgraph.Permanent(fmt.Errorf("durable: workflow %q: the thread's state names no task records (was it started by Workflow.Invoke?)", w.name))
	}
	rec, err := openRecords(ctx, w.cp, s.Run)
	if err != nil {
		return zero, err
	}
	ex := &execution{wf: w.name, node: ctx, rec: rec}
	ectx, cancel := context.WithCancel(context.WithValue(ctx, execKey{}, ex))
	ex.cancel = cancel
	defer func() {
		cancel()
		ex.tasks.Wait()
	}()
	return entrypoint(ectx, s.In)
}

// Interrupt pauses the workflow's run from the entrypoint or from inside a
// task, as statgraph.Interrupt does from a node: the first time, it returns
// an error wrapping statgraph.ErrInterrupted, which the task or entrypoint
// must return (a task's Future then returns it, and the entrypoint returns
// that); the run is saved and Invoke returns the pause. Resume runs the
// entrypoint again, finished tasks replaying, and this call then returns
// the resume value decoded into T. A task that paused is not finished: it
// runs again from its start on Resume. Outside a workflow it is
// statgraph.Interrupt.
func Interrupt[T any](ctx context.Context, payload any) (T, error) {
	ex, ok := ctx.Value(execKey{}).(*execution)
	if !ok {
		return statgraph.Interrupt[T](ctx, payload)
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if t, ok := ctx.Value(taskKey{}).(*taskRun); ok {
		t.interrupts++
	}
	return statgraph.Interrupt[T](ex.node, payload)
}

// replayInterrupts passes over the n interrupts a replayed task answered
// when it ran, so that later interrupts keep the IDs their answers were
// given under. ex.mu is held.
func (ex *execution) replayInterrupts(n int) {
	for range n {
		statgraph.Interrupt[struct{}](ex.node, nil)
	}
}
