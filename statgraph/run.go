package statgraph

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/statgraph/statgraph/statgraph/drain"
)

// Invoke runs the graph on input and returns the final state.
//
// It runs super-steps until no node is left to run. In each step the ready
// nodes run concurrently, each on the state as of the start of the step;
// their updates are merged at the barrier in node-name order; then edges are
// followed from every node that ran, and the nodes they lead to form the
// next step (a node reached from several nodes runs once).
//
// WithResume and WithResult continue a paused thread (Resume does it
// without an input) and report the run's result.
//
// Invoke returns the context's error (wrapped) soon after ctx is done, a
// *NodeError when a node fails, ErrStepLimit when the run is too long, an
// error wrapping ErrInterrupted when it paused, and one wrapping
// drain.ErrDrained when a drain was requested through ctx (package
// statgraph/drain: the step in flight finishes and is saved). It never leaves a
// goroutine behind, except that of a node abandoned at its WithTimeout
// deadline, which ends when the node returns.
func (g *Graph[S]) Invoke(ctx context.Context, input S, opts ...RunOption) (S, error) {
	r := g.newRun(opts)
	if r.cfg.call == nil {
		return r.start(ctx, input, nil)
	}
	return r.invoke(ctx, input)
}

// invoke runs r with the options of callOpts: it checks their types, starts
// or resumes the run, and fills the result.
func (r *run[S]) invoke(ctx context.Context, input S) (S, error) {
	c := r.cfg.call
	var zero S
	res, ok := c.result.(*Result[S])
	if c.result != nil && !ok {
		return zero, r.refuse(fmt.Errorf("statgraph: WithResult was given a %T, but the graph's state is %T: pass a *statgraph.Result[%[2]T]", c.result, zero))
	}
	if c.resume != nil {
		input = zero
	}
	s, err := r.start(ctx, input, c.resume)
	if res != nil {
		*res = r.result(s, err)
	}
	return s, err
}

// run is the state of one invocation. It is used by one goroutine, except
// that the slots of a parallel step are written by their own goroutines
// between the step's start and its barrier.
type run[S any] struct {
	g         *Graph[S]
	cfg       runConfig
	ctx       context.Context // the run's context; nodes derive from it
	emit      func(Event[S]) bool
	state     S
	step      int
	frontier  []int
	next      []int
	seen      []int // per node: the step it was last added to next
	slots     []slot[S]
	counters  []int // per node: executions so far
	saver     *saver[S]
	writes    *taskWrites       // failures to store a task's update (writes.go); nil until a step stores one
	joins     *joinState        // waiting joins' arrivals (join.go); nil until a join is reached
	tq        *taskQueue[S]     // Sends and fallback errors (send.go); nil until used
	resumes   map[string][]byte // interrupt id -> resume value (JSON)
	given     []string          // the interrupt ids WithResume answered in this invocation
	skipAhead bool              // resuming past an interrupt-before: don't pause again
	paused    bool              // the last checkpoint saved holds the frontier's pause
	pending   []PendingWrite    // updates of nodes already done in the current step
	rctx      nodeCtx           // the context routers and fan-outs run with (routerCtx)
	limits    []int             // per node: WithMaxConcurrency's bound of its tasks, 0 for none; nil when no node is bound
}

// slot holds one node's run within a step.
type slot[S any] struct {
	nctx nodeCtx
	out  S
	err  error
	dur  time.Duration
	done bool // out is a pending write restored from a checkpoint
	// handled: the node failed and its WithFallback takes over (err kept).
	handled bool
	in      *S             // a Send task's own input; nil: the step's state
	ev      *slotEvents[S] // set on the slot's first attempt with events on
}

// slotEvents is what a slot needs only when the run emits events, kept out
// of line so that plain runs keep small slots. The run's slots are reused
// from step to step, so each is allocated once per slot and run.
type slotEvents[S any] struct {
	r     *run[S]
	t0    time.Time                 // start of the current attempt
	retry []Event[S]                // events held back to the barrier of a parallel step
	sink  func(ev Event[none]) bool // forward, as the node's nodeInfo.sink
}

func (g *Graph[S]) newRun(opts []RunOption) *run[S] {
	r := &run[S]{g: g, cfg: runConfig{trace: g.trace, store: g.cfg.store}}
	for _, o := range opts {
		o(&r.cfg)
	}
	for name, n := range r.cfg.nodeConc {
		if i, ok := g.byName[name]; ok && n > 0 {
			if r.limits == nil {
				r.limits = make([]int, len(g.nodes))
			}
			r.limits[i] = n
		}
	}
	if r.cfg.stepLimit <= 0 {
		r.cfg.stepLimit = defaultStepLimit
	}
	if r.cfg.trace != nil {
		r.emit = newTracer[S](r.cfg.trace, g).event
	}
	return r
}

// refuse reports err, which stopped the run before it started, as the
// run's end.
func (r *run[S]) refuse(err error) error {
	if r.emit != nil {
		r.emit(Event[S]{Kind: EventRunEnd, Err: err, Thread: r.cfg.thread})
	}
	return err
}

// start runs the graph from input, or continues the run's thread. resume
// holds the values given to WithResume.
func (r *run[S]) start(ctx context.Context, input S, resume *resumeArg) (S, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.ctx = ctx
	// One allocation holds the two per-node tables and the two frontiers; a
	// frontier never holds more than n nodes, so each fits in its quarter.
	n := len(r.g.nodes)
	ints := make([]int, 4*n)
	r.seen, r.counters = ints[:n:n], ints[n:2*n:2*n]
	r.frontier, r.next = ints[2*n:2*n:3*n], ints[3*n:3*n:4*n]
	r.slots = make([]slot[S], 1, min(n, 8))

	var err error
	if r.cfg.nodeConc != nil {
		err = r.checkLimits()
	}
	if err == nil {
		err = r.open(ctx, input, resume)
	}
	if err != nil {
		var zero S
		if r.emit != nil {
			r.emit(Event[S]{Kind: EventRunEnd, Err: err, Thread: r.cfg.thread})
		}
		return zero, err
	}
	err = r.loop()
	if r.saver != nil {
		err = r.settle(err)
	}
	if r.emit != nil {
		r.emit(Event[S]{Kind: EventRunEnd, Step: r.step, State: r.state, Err: err, Thread: r.cfg.thread})
	}
	return r.state, err
}

// open sets the initial state and frontier: from input for a new run, from
// the thread's checkpoint for a continued one.
func (r *run[S]) open(ctx context.Context, input S, resume *resumeArg) error {
	cp := r.g.cfg.checkpointer
	if r.cfg.sub {
		cp = r.cfg.cp
	}
	r.cfg.cp = cp
	if cp == nil {
		if r.cfg.thread != "" || r.cfg.from != 0 || resume != nil {
			return fmt.Errorf("%w: WithThread, FromCheckpoint and WithResume need a graph compiled WithCheckpointer", errNoCheckpointer)
		}
		if err := r.begin(input); err != nil {
			return err
		}
		r.emitStart()
		return nil
	}
	if r.cfg.thread == "" {
		return fmt.Errorf("statgraph: the graph has a checkpointer: pass WithThread(id) so the run can be saved and resumed")
	}
	r.saver = &saver[S]{g: r.g, cp: cp, thread: r.cfg.thread, mode: r.cfg.durability}
	continued, merged, err := r.restore(ctx, input, resume)
	if err != nil {
		return err
	}
	switch {
	case !continued:
		if err := r.begin(input); err != nil {
			return err
		}
		var ints []Interruption
		if r.g.before != nil {
			ints = r.pauses(nil, r.frontier)
		}
		if err := r.saveInput(nil, ints); err != nil {
			return err
		}
	case merged:
		// An unfinished thread continued with an input that changed its
		// state: the input is saved as for a new run, with the step's
		// pending writes.
		if err := r.saveInput(r.pending, nil); err != nil {
			return err
		}
	}
	r.emitStart()
	return nil
}

// begin sets the state of a new run from input, and the first frontier.
func (r *run[S]) begin(input S) error {
	r.state = input
	if s := r.saver; s != nil && s.havePrev && r.g.reducer != nil {
		r.state = r.g.reducer(s.prev, input) // a finished thread's next run
	}
	if err := r.route(&r.g.start); err != nil {
		return err
	}
	r.nextTasks() // Start's Sends, and its WithDefer nodes held as after every step
	if len(r.next) > 1 {
		slices.Sort(r.next) // node-name order, as after every step
	}
	r.frontier, r.next = r.next, r.frontier[:0]
	return nil
}

// loop runs super-steps until the frontier is empty.
func (r *run[S]) loop() error {
	for len(r.frontier) > 0 || len(r.sendList()) > 0 {
		if err := r.ctx.Err(); err != nil {
			return fmt.Errorf("statgraph: run stopped before step %d: %w", r.step+1, err)
		}
		if r.step >= r.cfg.stepLimit {
			return fmt.Errorf("%w: %d steps taken and %s still to run; raise it with WithStepLimit if the loop is meant to be this long",
				ErrStepLimit, r.step, strings.Join(r.names(r.frontier), ", "))
		}
		if r.g.before != nil && !r.skipAhead {
			if err := r.pauseBefore(); err != nil {
				return err
			}
		}
		r.skipAhead = false
		if err := r.superstep(); err != nil {
			return err
		}
		if !r.cfg.sub && !r.paused && drain.Requested(r.ctx) && (len(r.frontier) > 0 || len(r.sendList()) > 0) {
			return r.drained()
		}
	}
	return nil
}

// drained is the error of a run that stops after its step because a drain
// was requested (package statgraph/drain). The step's checkpoint is saved
// (settle writes it under DurabilityExit). A subgraph's run does not
// drain: it is part of its parent's step, which finishes; nor does a run
// whose step paused, which stops at its interrupt anyway.
func (r *run[S]) drained() error {
	if r.saver == nil {
		return fmt.Errorf("%w after step %d; the graph has no checkpointer, so the run cannot be continued", drain.ErrDrained, r.step)
	}
	return fmt.Errorf("%w after step %d of thread %q, its checkpoint saved; run the thread again (WithThread(%[3]q)) to continue", drain.ErrDrained, r.step, r.cfg.thread)
}

// superstep runs the frontier, merges the updates and computes the next
// frontier.
func (r *run[S]) superstep() error {
	r.step++
	if r.emit != nil {
		if !r.emit(Event[S]{Kind: EventStepStart, Step: r.step, Nodes: r.taskNames(r.frontier)}) {
			return r.stopped()
		}
	}
	nf := len(r.frontier)
	k := nf + len(r.sendList())
	if cap(r.slots) < k {
		r.slots = append(r.slots[:cap(r.slots)], make([]slot[S], k-cap(r.slots))...)
	}
	r.slots = r.slots[:k]
	for i := range r.slots {
		r.slots[i].in, r.slots[i].nctx.info.seq = nil, 0
		if i >= nf {
			r.slots[i].in = &r.sendList()[i-nf].in
		}
	}
	if k > nf {
		r.numberSends()
	}
	r.restorePending()

	put := false // the tasks' updates are stored as they finish
	if k == 1 {
		if sl := &r.slots[0]; !sl.done {
			r.exec(sl, r.taskNode(0))
		}
	} else {
		if r.emit != nil {
			for i := range r.slots {
				if !r.slots[i].done && !r.emit(Event[S]{Kind: EventNodeStart, Step: r.step, Node: r.taskNode(i).name, Attempt: 1}) {
					return r.stopped()
				}
			}
		}
		put = r.putsWrites()
		if m := r.cfg.maxConc; r.limits != nil {
			r.execLimited(m, put)
		} else if m > 0 && m < k {
			r.execBounded(m, put)
		} else {
			var wg sync.WaitGroup
			for i := 1; i < k; i++ {
				if sl := &r.slots[i]; !sl.done {
					n := r.taskNode(i)
					if put {
						wg.Go(func() { r.exec(sl, n); r.putWrite(i) })
					} else {
						wg.Go(func() { r.exec(sl, n) }) // captures only what it needs: steps without writes allocate as before
					}
				}
			}
			if sl := &r.slots[0]; !sl.done {
				r.exec(sl, r.taskNode(0))
				if put {
					r.putWrite(0)
				}
			}
			wg.Wait()
		}
		if put {
			if err := r.writeErr(); err != nil {
				return err
			}
		}
	}
	if r.emit != nil && k > 1 {
		for i := range r.slots {
			if !r.emitEnd(&r.slots[i], r.taskNode(i).idx) {
				return r.stopped()
			}
		}
	}
	if err := r.barrierErrors(put); err != nil {
		return err
	}
	r.pending = r.pending[:0]
	r.resumes = nil

	if r.emit != nil && slices.Contains(r.cfg.kinds, EventNodeUpdate) && !r.emitNodeUpdates() {
		return r.stopped()
	}
	if err := r.merge(); err != nil {
		return err
	}
	r.next = r.next[:0]
	for k, i := range r.frontier {
		r.counters[i]++
		n := r.g.nodes[i]
		var err error
		if r.slots[k].handled {
			err = r.fallBack(n, r.slots[k].err)
		} else {
			err = r.route(n)
		}
		if err == nil && n.cmd != nil {
			err = r.gotoFrom(n, &r.slots[k])
		}
		if err != nil {
			return err
		}
	}
	if r.sendList() != nil {
		if err := r.routeSends(); err != nil {
			return err
		}
	}
	var ran []int // the nodes of the step's tasks, for WithInterruptAfter
	if r.g.after != nil {
		ran = slices.Clone(r.frontier)
		for _, t := range r.sendList() {
			if !slices.Contains(ran, t.node) {
				ran = append(ran, t.node)
			}
		}
	}
	r.nextTasks()
	if len(r.next) > 1 {
		slices.Sort(r.next)
	}
	var ints []Interruption
	if r.g.after != nil || r.g.before != nil {
		ints = r.pauses(ran, r.next)
	}
	if r.saver != nil {
		if err := r.saveLoop(ints); err != nil {
			return err
		}
		r.paused = ints != nil
	}
	r.frontier, r.next = r.next, r.frontier
	if ints != nil && ints[0].When == "after" {
		return r.interrupted(ints)
	}
	return nil
}

// merge folds the step's updates into the state in node-name order.
func (r *run[S]) merge() error {
	if r.g.reducer == nil {
		if len(r.slots) > 1 {
			return fmt.Errorf("%w: nodes %q and %q ran in the same step and both returned an update; give the graph a reducer with SetReducer",
				errConflictingUpdates, r.taskNode(0).name, r.taskNode(1).name)
		}
		if !r.slots[0].handled {
			r.state = r.slots[0].out
		}
	} else {
		for i := range r.slots {
			if !r.slots[i].handled {
				r.state = r.g.reducer(r.state, r.slots[i].out)
			}
		}
	}
	for i := range r.slots {
		var zero S
		r.slots[i].out = zero // let the update be collected
		r.slots[i].done = false
	}
	if r.emit != nil {
		if !r.emit(Event[S]{Kind: EventUpdate, Step: r.step, State: r.state}) {
			return r.stopped()
		}
	}
	return nil
}

// route follows n's edges on the current state, adding the destinations to
// r.next once each.
func (r *run[S]) route(n *node[S]) error {
	if n.joinIn != nil {
		r.arrive(n)
	}
	for _, t := range n.next {
		r.add(t)
	}
	if n.fan != nil {
		if err := r.sendTo(n); err != nil {
			return err
		}
	}
	if br := n.branch; br != nil {
		if br.routes != nil {
			return r.followAll(n, br.routes(r.routerCtx(n), r.state))
		}
		key := br.router(r.routerCtx(n), r.state)
		if t, ok := br.to[key]; ok && r.emit == nil {
			r.add(t) // the common case, kept inline
			return nil
		}
		return r.follow(n, key)
	}
	return nil
}

// follow adds the destination of n's path-map key to r.next.
func (r *run[S]) follow(n *node[S], key string) error {
	br := n.branch
	t, ok := br.to[key]
	if !ok {
		return fmt.Errorf("%w: node %q routed to %q; its path map has %s", errUnknownRoute, n.name, key, strings.Join(br.keys, ", "))
	}
	if r.emit != nil {
		if !r.emit(Event[S]{Kind: EventRoute, Step: r.step, Node: n.name, Key: key, To: r.g.name(t)}) {
			return r.stopped()
		}
	}
	r.add(t)
	return nil
}

func (r *run[S]) followAll(n *node[S], keys []string) error {
	for _, key := range keys {
		if err := r.follow(n, key); err != nil {
			return err
		}
	}
	return nil
}

func (r *run[S]) add(t int) {
	if t == endIdx || r.seen[t] == r.step+1 {
		return
	}
	r.seen[t] = r.step + 1
	r.next = append(r.next, t)
}
