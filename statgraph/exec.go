package statgraph

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strconv"
	"time"

	"github.com/statgraph/statgraph/internal/clock"
)

// nodeInfo is what a running node can learn about itself through its ctx.
// Each slot owns one; it is written only by the goroutine running the slot.
type nodeInfo struct {
	node    string
	attempt int
	step    int
	resumes map[string][]byte      // values given to WithResume, by interrupt id
	extra   *taskExtra             // set only for command, subgraph and fallback nodes
	calls   int                    // Interrupt calls so far in this attempt
	raised  []Interruption         // interrupts raised by this attempt
	count   int                    // the node's executions before this one
	seq     int                    // the node's tasks before this one in the step (Sends; set by superstep)
	cfg     *runConfig             // the run's configuration (subgraphs read it)
	sink    func(Event[none]) bool // takes events raised inside the node; nil without events
}

// taskExtra is what only some nodes carry, kept out of line so that every
// slot stays small.
type taskExtra struct {
	gotos   []string // a command node's Goto, or a subgraph node's from ToParent
	sends   any      // the []Send[S] of the same Command; nil when it sent none
	cached  bool     // the attempt's update came from the node's cache
	failure error    // for a WithFallback handler: the error handled (fallback.go)
}

// task names the task in interrupt IDs: the node's name, followed for the
// second and later tasks of the node in one step (Sends) by "[seq]".
func (info *nodeInfo) task() string {
	if info.seq == 0 {
		return info.node
	}
	return info.node + "[" + strconv.Itoa(info.seq) + "]"
}

// sendList returns the Sends a command node returned (a []Send[S]), if any.
func (info *nodeInfo) sendList() any {
	if info.extra == nil {
		return nil
	}
	return info.extra.sends
}

// gotoList returns the Goto a command node returned, if any.
func (info *nodeInfo) gotoList() []string {
	if info.extra == nil {
		return nil
	}
	return info.extra.gotos
}

type infoKey struct{}

// nodeCtx is the context a node runs with: the run's context plus the
// node's nodeInfo. Slots embed it, so handing it to a node allocates
// nothing.
type nodeCtx struct {
	context.Context
	info nodeInfo
}

// Value returns the node's info for infoKey and defers to the run's context
// for every other key.
func (c *nodeCtx) Value(key any) any {
	if _, ok := key.(infoKey); ok {
		return &c.info
	}
	return c.Context.Value(key)
}

// exec runs node n in slot sl, with retries, leaving the update or the error
// in the slot.
func (r *run[S]) exec(sl *slot[S], n *node[S]) {
	sl.nctx.Context = r.ctx
	info := &sl.nctx.info
	info.node, info.step, info.resumes = n.name, r.step, r.resumes
	info.extra = nil
	if q := r.tq; q != nil && q.failures != nil {
		if err, ok := q.failures[n.idx]; ok {
			info.extra = &taskExtra{failure: err}
		}
	}
	info.count, info.cfg = r.counters[n.idx]+info.seq, &r.cfg
	if sl.ev != nil {
		sl.ev.retry = sl.ev.retry[:0]
	}
	// The loop keeps a small frame: parallel nodes run on fresh goroutines,
	// whose stacks would otherwise grow (and be copied) on every step.
	// Events and retries live in separate functions.
	for attempt := 1; ; attempt++ {
		info.attempt, info.calls, info.raised = attempt, 0, nil
		if info.extra != nil {
			info.extra.gotos, info.extra.sends, info.extra.cached = nil, nil, false
		}
		if r.emit != nil && !r.startAttempt(sl, n, attempt) {
			return
		}
		in := &r.state
		if sl.in != nil {
			in = sl.in
		}
		var out S
		var err error
		if r.cfg.hook == nil {
			out, err = r.call(&sl.nctx, n, *in, attempt)
		} else {
			out, err = r.callHooked(sl, n, *in, attempt)
		}
		if err == nil {
			sl.out, sl.err = out, nil
			if r.emit != nil {
				r.endAttempt(sl, n)
			}
			return
		}
		if !r.retryAfter(sl, n, attempt, err) {
			return
		}
	}
}

// startAttempt notes the start of an attempt for events; for a node running
// alone it reports it at once. It returns false when the listener stopped.
//
//go:noinline
func (r *run[S]) startAttempt(sl *slot[S], n *node[S], attempt int) bool {
	if sl.ev == nil {
		sl.ev = &slotEvents[S]{r: r}
		sl.ev.sink = sl.ev.forward
	}
	sl.ev.t0 = time.Now()
	sl.nctx.info.sink = sl.ev.sink
	if len(r.slots) == 1 && !r.emit(Event[S]{Kind: EventNodeStart, Step: r.step, Node: n.name, Attempt: attempt}) {
		sl.err = r.stopped()
		return false
	}
	return true
}

// endAttempt records an attempt's duration and, for a node running alone,
// reports its end.
//
//go:noinline
func (r *run[S]) endAttempt(sl *slot[S], n *node[S]) {
	sl.dur = time.Since(sl.ev.t0)
	if len(r.slots) == 1 {
		r.emitEnd(sl, n.idx)
	}
}

// retryAfter handles a failed attempt: it records the error and reports
// whether to try again, after waiting the policy's delay.
//
//go:noinline
func (r *run[S]) retryAfter(sl *slot[S], n *node[S], attempt int, err error) bool {
	sl.err = err
	info := &sl.nctx.info
	if errors.Is(err, ErrInterrupted) && len(info.raised) > 0 {
		return false
	}
	p := policyFor(n.retry, cause(err))
	if p == nil || attempt >= p.maxAttempts() || r.ctx.Err() != nil {
		if r.emit != nil {
			r.endAttempt(sl, n)
		}
		return false
	}
	if r.emit != nil {
		sl.dur = time.Since(sl.ev.t0)
	}
	delay := p.backoff().Delay(attempt)
	ev := Event[S]{Kind: EventRetry, Step: r.step, Node: n.name, Attempt: attempt, Delay: delay, Err: err}
	if len(r.slots) == 1 {
		if r.emit != nil {
			r.emit(ev)
		}
	} else if r.emit != nil {
		// In a parallel step the retry and the next attempt's start are
		// reported at the barrier, as every attempt's start is when the
		// node runs alone.
		sl.ev.retry = append(sl.ev.retry, ev, Event[S]{Kind: EventNodeStart, Step: r.step, Node: n.name, Attempt: attempt + 1})
	}
	if serr := clock.Sleep(r.ctx, delay); serr != nil {
		sl.err = fmt.Errorf("statgraph: node %q: stopped while waiting to retry: %w", n.name, serr)
		return false
	}
	return true
}

// call runs one attempt of n, turning a panic into a *NodeError.
func (r *run[S]) call(ctx context.Context, n *node[S], in S, attempt int) (out S, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = panicError(n.name, attempt, p)
		}
	}()
	if n.timeout > 0 {
		out, err = callBounded(ctx, n, attempt, in)
	} else {
		out, err = n.fn(ctx, in)
	}
	if err != nil {
		err = nodeError(n.name, attempt, err)
	}
	return out, err
}

//go:noinline
func panicError(node string, attempt int, p any) error {
	return &NodeError{Node: node, Attempt: attempt, Panic: p, Stack: debug.Stack()}
}

// nodeError wraps err in a *NodeError unless it already is this node's.
//
//go:noinline
func nodeError(node string, attempt int, err error) error {
	var ne *NodeError
	if errors.As(err, &ne) && ne.Node == node {
		return err
	}
	return &NodeError{Node: node, Attempt: attempt, Err: err}
}

// cause returns what the node itself returned, for RetryOn.
func cause(err error) error {
	if ne, ok := err.(*NodeError); ok && ne.Err != nil {
		return ne.Err
	}
	return err
}

// emitEnd reports the end of the node in slot sl (and, for a parallel step,
// the retries it went through).
func (r *run[S]) emitEnd(sl *slot[S], idx int) bool {
	if sl.done {
		return true
	}
	if sl.ev != nil {
		for _, ev := range sl.ev.retry {
			if !r.emit(ev) {
				return false
			}
		}
	}
	ev := Event[S]{Kind: EventNodeEnd, Step: r.step, Node: r.g.name(idx), Attempt: sl.nctx.info.attempt, Duration: sl.dur, Err: sl.err}
	if x := sl.nctx.info.extra; x != nil && sl.err == nil {
		ev.Cached = x.cached
	}
	return r.emit(ev)
}

// barrierErrors checks the step's slots once all have finished. Interrupts
// pause the run; failures end it. Either way the updates of the nodes that
// did finish are reported (EventNodeUpdate) and saved as pending writes
// (saveUnfinished) so that a resume does not run them again. put says
// whether the tasks' updates were stored as they finished.
func (r *run[S]) barrierErrors(put bool) error {
	var failed error
	var raised []Interruption
	for i := range r.slots {
		sl := &r.slots[i]
		if sl.err == nil {
			continue
		}
		if errors.Is(sl.err, ErrInterrupted) && len(sl.nctx.info.raised) > 0 {
			raised = append(raised, sl.nctx.info.raised...)
			continue
		}
		if r.handles(r.taskNode(i), sl) {
			continue
		}
		if failed == nil {
			failed = sl.err
		}
	}
	if failed == nil && raised == nil {
		return nil
	}
	if failed == nil && r.saver == nil {
		return fmt.Errorf("%w: node %q called Interrupt; compile the graph WithCheckpointer so the run can pause and resume", errNoCheckpointer, raised[0].Node)
	}
	if r.emit != nil && slices.Contains(r.cfg.kinds, EventNodeUpdate) && !r.emitNodeUpdates() {
		return r.stopped()
	}
	if r.saver != nil {
		if err := r.saveUnfinished(failed != nil, raised, put); err != nil {
			return err
		}
	}
	if failed != nil {
		if err := r.ctx.Err(); err != nil && !errors.Is(failed, err) {
			return fmt.Errorf("%w (%w)", failed, err)
		}
		return failed
	}
	return r.interrupted(raised)
}
