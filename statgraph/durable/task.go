package durable

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/drain"
)

// Task is a durable step: a function whose result, once it returns
// without error, is recorded in the run's checkpointer and replayed instead
// of being run again. Call it from an entrypoint. A Task is immutable and
// safe for concurrent use by any number of workflows and runs.
type Task[I, O any] struct {
	name string
	g    *statgraph.Graph[call[I, O]]
	err  error // sticky: an option that did not compile
}

// call is a task's graph state.
type call[I, O any] struct {
	In  I
	Out O
}

// Option configures a task.
type Option func(*taskConfig)

type taskConfig struct {
	retry   []statgraph.RetryPolicy
	timeout time.Duration
	cache   time.Duration
}

// WithRetry retries a failed task under the first of policies that
// accepts its error (statgraph.WithRetry: defaults on RetryPolicy's
// fields; statgraph.Permanent errors and interrupts are never retried).
// Without it a task runs once per call.
func WithRetry(policies ...statgraph.RetryPolicy) Option {
	return func(c *taskConfig) { c.retry = append(c.retry, policies...) }
}

// WithTimeout fails an attempt of the task that runs longer than d
// (statgraph.WithTimeout: the attempt's ctx is cancelled, and the call goes
// on without it at the deadline).
func WithTimeout(d time.Duration) Option { return func(c *taskConfig) { c.timeout = d } }

// WithCache reuses a result of the task for ttl: a call whose input encodes
// (JSON) as that of a call that finished within ttl returns its result
// without running, in any workflow, thread or run of this process
// (statgraph.WithCache: in memory, the least recently used dropped beyond
// 4,096 entries). A cached result is recorded like a run one.
func WithCache(ttl time.Duration) Option { return func(c *taskConfig) { c.cache = ttl } }

// NewTask returns the task called name that runs fn. Names identify calls
// on replay: give each task of a workflow its own. A bad option (a negative
// cache ttl) is reported by every call of the task.
func NewTask[I, O any](name string, fn func(ctx context.Context, in I) (O, error), opts ...Option) *Task[I, O] {
	var cfg taskConfig
	for _, o := range opts {
		o(&cfg)
	}
	var nopts []statgraph.NodeOption
	for _, p := range cfg.retry {
		nopts = append(nopts, statgraph.WithRetry(p))
	}
	if cfg.timeout > 0 {
		nopts = append(nopts, statgraph.WithTimeout(cfg.timeout))
	}
	if cfg.cache != 0 {
		nopts = append(nopts, statgraph.WithCache[call[I, O]](cfg.cache, nil))
	}
	g, err := statgraph.New[call[I, O]]().
		AddNode(name, func(ctx context.Context, c call[I, O]) (call[I, O], error) {
			out, err := fn(ctx, c.In)
			return call[I, O]{Out: out}, err
		}, nopts...).
		AddEdge(statgraph.Start, name).AddEdge(name, statgraph.End).
		Compile()
	if err != nil {
		err = fmt.Errorf("durable: task %q: %w", name, err)
	}
	return &Task[I, O]{name: name, g: g, err: err}
}

// Future is the result of a task call, available once the task finished
// (or was replayed). Safe for concurrent use.
type Future[T any] struct {
	done chan struct{}
	v    T
	err  error
}

func (f *Future[T]) resolve(v T, err error) *Future[T] {
	f.v, f.err = v, err
	close(f.done)
	return f
}

// Get waits for the task and returns its result, or its error: the
// task's last attempt's (a *statgraph.NodeError, reached with errors.As),
// ErrNondeterministic, or the context's error if ctx is done first.
func (f *Future[T]) Get(ctx context.Context) (T, error) {
	select {
	case <-f.done:
		return f.v, f.err
	case <-ctx.Done():
		var zero T
		return zero, context.Cause(ctx)
	}
}

// taskRun is what a running task's ctx carries: the interrupts it raised.
type taskRun struct{ interrupts int }

type taskKey struct{}

// Do calls the task and waits for its result: Call(ctx, in).Get(ctx).
func (t *Task[I, O]) Do(ctx context.Context, in I) (O, error) { return t.Call(ctx, in).Get(ctx) }

// Call starts the task on in and returns its Future at once: a task call
// that finished in the run being replayed returns its recorded result
// without running; any other runs on a goroutine of its own, so the tasks
// an entrypoint starts before it waits run in parallel. Once a drain is
// requested on ctx (package statgraph/drain), a call that would run fails
// with an error wrapping drain.ErrDrained instead: the tasks running finish
// and are recorded, and the run, failing with that error, continues when
// the thread is run again. ctx must be the
// entrypoint's (or derived from it); a call from inside a task, or outside
// a workflow, fails. The entrypoint waits for every task it started before
// its run ends, and cancels those it did not wait for.
func (t *Task[I, O]) Call(ctx context.Context, in I) *Future[O] {
	f := &Future[O]{done: make(chan struct{})}
	var zero O
	if t.err != nil {
		return f.resolve(zero, t.err)
	}
	ex, ok := ctx.Value(execKey{}).(*execution)
	if !ok {
		return f.resolve(zero, fmt.Errorf("durable: task %q called outside a workflow: call tasks from the entrypoint given to durable.New, with its ctx", t.name))
	}
	if _, ok := ctx.Value(taskKey{}).(*taskRun); ok {
		return f.resolve(zero, fmt.Errorf("durable: task %q called from inside another task of workflow %q: call tasks from the entrypoint, or call the function directly", t.name, ex.wf))
	}
	b, err := json.Marshal(in)
	if err != nil {
		return f.resolve(zero, statgraph.Permanent(fmt.Errorf("durable: task %q: its input is not JSON-encodable: %w", t.name, err)))
	}
	sum := sha256.Sum256(b)
	r := record{Name: t.name, Input: hex.EncodeToString(sum[:12])}

	ex.mu.Lock()
	seq := ex.calls
	ex.calls++
	if old, ok := ex.rec.get(seq); ok {
		defer ex.mu.Unlock()
		if old.Name != r.Name || old.Input != r.Input {
			return f.resolve(zero, statgraph.Permanent(fmt.Errorf("%w: call %d of workflow %q (records %s) is task %q with input %s, but the run being replayed called task %q with input %s there; "+
				"the entrypoint must call the same tasks with the same inputs in the same order on every run: read clocks, randomness and I/O inside tasks",
				ErrNondeterministic, seq, ex.wf, ex.rec.thread, r.Name, r.Input, old.Name, old.Input)))
		}
		var out O
		if err := json.Unmarshal(old.Output, &out); err != nil {
			return f.resolve(zero, statgraph.Permanent(fmt.Errorf("durable: task %q: the result recorded for call %d (records %s) does not decode: %w", t.name, seq, ex.rec.thread, err)))
		}
		ex.replayInterrupts(old.Interrupts)
		return f.resolve(out, nil)
	}
	ex.mu.Unlock()
	if drain.Requested(ctx) {
		return f.resolve(zero, statgraph.Permanent(fmt.Errorf("%w: task %q (call %d of workflow %q) was not started; run the thread again to continue from it",
			drain.ErrDrained, t.name, seq, ex.wf)))
	}

	ex.tasks.Go(func() {
		tr := &taskRun{}
		res, err := t.g.Invoke(context.WithValue(ctx, taskKey{}, tr), call[I, O]{In: in})
		if err != nil {
			f.resolve(zero, err)
			return
		}
		if r.Output, err = json.Marshal(res.Out); err != nil {
			f.resolve(zero, statgraph.Permanent(fmt.Errorf("durable: task %q: its result is not JSON-encodable: %w", t.name, err)))
			return
		}
		r.Interrupts = tr.interrupts
		if err := ex.rec.put(ctx, seq, r); err != nil {
			f.resolve(zero, err)
			return
		}
		f.resolve(res.Out, nil)
	})
	return f
}
