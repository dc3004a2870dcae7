package statgraph

import (
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"
)

// gateRun is the gate bookkeeping of one run: the verdicts waiting for
// their gate, the retry counters of every retry target, the attempts of the
// targets, the gates' decisions and the warnings. It is checkpointed in
// Checkpoint.Extra, so a resumed run keeps counting.
//
// It is written only by the run's goroutine, at the barrier (mergeGated) and
// while routing; nodes running in parallel only read it (beforeExec,
// evalGate, Attempts).
type gateRun[S any] struct {
	g        *Graph[S]
	gg       *gateGraph[S]
	verdicts []verdictSlot  // per validator slot
	tg       []targetState  // per target slot
	history  []tryRecord[S] // every run of a retry target, oldest first
	log      []*GateOutcome // every gate decision, oldest first
	warnings []Warning

	retried []int         // target slots retried in the current step
	delay   time.Duration // the longest backoff asked for in the current step
	restart bool          // a gate retried Start in the current step

	dirty bool       // changed since the last checkpoint
	save  extraSaver // what the last checkpoint holds (gatepersist.go)
}

type verdictSlot struct {
	v  Verdict
	ok bool
}

// targetState is the retry context of one retry target. A context is a
// chain of runs of the target linked by retries: a run that follows no
// retry starts a new one.
type targetState struct {
	Node    string `json:"node"`
	Context int    `json:"context"` // 1 for the first
	Retries int    `json:"retries"` // in this context (reset by an escalation's "retry")
	Total   int    `json:"total"`   // over the run
	Tries   int    `json:"tries"`   // runs in this context
	Pending bool   `json:"pending"` // retried and not yet run again
	Hint    string `json:"hint,omitempty"`
	Last    int    `json:"last"` // index in history of the target's last run, -1 for none
}

type tryRecord[S any] struct {
	node     string
	context  int
	try      int
	step     int
	out      S
	feedback string
	enc      []byte // out encoded, once a checkpoint needed it
}

// gateInfo is the part of a slot's nodeInfo that only graphs with gates
// use: the run's gate state for Attempts, the node's index, and a
// validator's verdict and input key.
type gateInfo struct {
	gs         any // *gateRun[S]
	idx        int
	verdict    Verdict
	hasVerdict bool
	key        string
}

// gateDecision is what a gate decided in its step; routeGate carries it out.
type gateDecision struct {
	out     GateOutcome
	targets []int      // target slots to retry
	reset   bool       // an escalation answered "retry": start a new retry context first
	update  bool       // the slot holds the gate's Record update
	vbuf    [2]Verdict // out.Verdicts of a gate with few validators
}

func newGateRun[S any](g *Graph[S]) *gateRun[S] {
	gs := &gateRun[S]{
		g: g, gg: g.gates,
		verdicts: make([]verdictSlot, g.gates.validators),
		tg:       make([]targetState, len(g.gates.targets)),
	}
	for i, t := range g.gates.targets {
		gs.tg[i] = targetState{Node: t.name, Context: 1, Last: -1}
	}
	return gs
}

// beforeExec prepares node n of a graph with gates and reports whether it
// was handled without running a node function: a gate deciding, or a
// validator whose passing verdict is kept (RerunFailedOnly, same input key).
func (r *run[S]) beforeExec(sl *slot[S], n *node[S]) bool {
	info := &sl.nctx.info
	if info.gate == nil {
		info.gate = &gateInfo{gs: r.gs}
	}
	gi := info.gate
	gi.idx, gi.hasVerdict, gi.key = n.idx, false, ""
	sl.dec = nil
	switch n.kind {
	case gateKind:
		r.runGate(sl, n)
		return true
	case validatorKind:
		return n.val.key != nil && r.reuseVerdict(sl, n)
	}
	return false
}

// runGate runs gate n in slot sl. It is apart from beforeExec, and not
// inlined, so that the frame of a parallel node's goroutine stays small.
//
//go:noinline
func (r *run[S]) runGate(sl *slot[S], n *node[S]) {
	info := &sl.nctx.info
	info.attempt, info.calls, info.raised = 1, 0, nil
	inline := len(r.slots) == 1 && r.emit != nil
	if inline && !r.emit(Event[S]{Kind: EventNodeStart, Step: r.step, Node: n.name, Attempt: 1}) {
		sl.err = r.stopped()
		return
	}
	if r.emit == nil {
		r.evalGate(sl, n)
		return
	}
	t0 := time.Now()
	r.evalGate(sl, n)
	sl.dur = time.Since(t0)
	if inline {
		r.emitEnd(sl, n.idx)
	}
}

// reuseVerdict keeps validator n's earlier passing verdict when its input
// key is unchanged (RerunFailedOnly), reporting whether it did.
//
//go:noinline
func (r *run[S]) reuseVerdict(sl *slot[S], n *node[S]) bool {
	gi := sl.nctx.info.gate
	gi.key = n.val.key(r.state)
	kept := r.gs.verdicts[n.val.slot]
	if !kept.ok || !kept.v.Passed || kept.v.Key != gi.key {
		return false
	}
	var zero S
	gi.verdict, gi.hasVerdict = kept.v, true
	gi.verdict.Reused = true
	sl.out, sl.err, sl.dur = zero, nil, 0
	return true
}

// evalGate decides what gate n does, from the verdicts recorded before this
// step, leaving the decision (and the gate's Record update) in sl. It
// changes nothing in the run: routeGate does.
func (r *run[S]) evalGate(sl *slot[S], n *node[S]) {
	var zero S
	sl.out, sl.err = zero, nil
	gs, gn := r.gs, n.gate
	d := &gateDecision{out: GateOutcome{Gate: n.name, Step: r.step}}
	if len(gn.validators) <= len(d.vbuf) {
		d.out.Verdicts = d.vbuf[:0]
	} else {
		d.out.Verdicts = make([]Verdict, 0, len(gn.validators))
	}
	var fbuf [4]Verdict
	failed := fbuf[:0] // not kept, so it stays on the stack while small
	var buf [8]int
	failedTo := buf[:0]
	for k, vi := range gn.validators {
		vn := r.g.nodes[vi]
		vs := gs.verdicts[vn.val.slot]
		v := vs.v
		if !vs.ok {
			v = Verdict{Validator: vn.name, Mode: ModeBlocking, Feedback: "the validator produced no verdict before the gate ran; give it an edge that reaches the gate in the step before"}
		}
		d.out.Verdicts = append(d.out.Verdicts, v)
		if v.Passed {
			continue
		}
		switch v.Mode {
		case ModeAdvisory:
			d.out.Warnings = append(d.out.Warnings, Warning{Gate: n.name, Validator: v.Validator, Step: r.step, Message: v.Feedback})
		case ModeInformational:
		default:
			failed = append(failed, v)
			failedTo = append(failedTo, gn.targetOf[k])
		}
	}
	if len(gn.targets) > 0 {
		first := gs.gg.targets[gn.targets[0]]
		d.out.MaxRetries = first.limit
		d.out.Retries = gs.tg[gn.targets[0]].Retries
	}
	if len(failed) == 0 {
		d.out.Decision, d.out.Passed = GatePassed, true
		r.recordGate(sl, n, d)
		return
	}
	d.targets = chooseTargets(gn, failedTo)
	t, spec := gs.tg[d.targets[0]], gs.gg.targets[d.targets[0]]
	d.out.MaxRetries, d.out.Retries = spec.limit, t.Retries
	exhausted, hard := false, false
	for _, s := range d.targets {
		ts, sp := gs.tg[s], gs.gg.targets[s]
		if ts.Retries+1 > sp.limit {
			exhausted = true
		}
		if sp.nodeLimit > 0 && ts.Total+1 > sp.nodeLimit {
			exhausted, hard = true, true
		}
	}
	if len(d.targets) == 1 {
		d.out.Targets = gn.names[slices.Index(gn.targets, d.targets[0])]
	} else {
		for _, s := range d.targets {
			d.out.Targets = append(d.out.Targets, gs.gg.targets[s].name)
		}
	}
	if !exhausted {
		d.out.Decision, d.out.Retries = GateRetry, t.Retries+1
		d.out.Feedback = aggregate(n.name, failed, gn.cfg.Hints, t.Retries+2, spec.limit+1, "")
		r.recordGate(sl, n, d)
		return
	}
	d.out.Feedback = aggregate(n.name, failed, gn.cfg.Hints, 0, t.Retries+1, "")
	if hard || gn.cfg.OnExhausted == Fail {
		d.out.Decision = GateFailed
		r.recordGate(sl, n, d)
		return
	}
	esc := Escalation{Gate: n.name, Retries: t.Retries, MaxRetries: spec.limit, Failed: slices.Clone(failed),
		Hints: gn.cfg.Hints, Feedback: d.out.Feedback, Choices: []string{"retry", "skip", "abort"}}
	for {
		choice, err := Interrupt[string](&sl.nctx, esc)
		if err != nil {
			sl.err = err
			return
		}
		switch choice {
		case "retry":
			d.out.Decision, d.reset, d.out.Retries = GateRetry, true, 0
			d.out.Feedback = aggregate(n.name, failed, gn.cfg.Hints, 1, spec.limit+1, " after the retry count was reset")
		case "skip":
			d.out.Decision = GateSkipped
			d.out.Warnings = append(d.out.Warnings, Warning{Gate: n.name, Step: r.step,
				Message: fmt.Sprintf("gate skipped after %d failed attempts: %s", t.Retries+1, checkNames(failed))})
		case "abort":
			d.out.Decision = GateAborted
		default:
			// Ask again: a new interrupt, whose payload says what was wrong.
			esc.Invalid = fmt.Sprintf("the answer %q is not one of %s", choice, strings.Join(esc.Choices, ", "))
			continue
		}
		r.recordGate(sl, n, d)
		return
	}
}

// recordGate stores the decision in sl and runs the gate's Record, turning
// a panic in it into the gate's error.
func (r *run[S]) recordGate(sl *slot[S], n *node[S], d *gateDecision) {
	sl.dec = d
	rec := n.gate.cfg.Record
	if rec == nil {
		return
	}
	defer func() {
		if p := recover(); p != nil {
			sl.err = &NodeError{Node: n.name, Attempt: 1, Panic: p, Stack: debug.Stack()}
		}
	}()
	sl.out, d.update = rec(r.state, d.out), true
}

// mergeGated is merge for a graph with gates: verdicts are recorded instead
// of merged, a gate contributes its Record update if it has one, and the
// updates of retry targets are kept as their attempts.
func (r *run[S]) mergeGated() error {
	gs := r.gs
	updates, first := 0, -1
	for i := range r.slots {
		sl := &r.slots[i]
		n := r.g.nodes[r.frontier[i]]
		if s := gs.gg.tslot[n.idx]; s >= 0 {
			gs.recordTry(s, sl.out, r.step)
		}
		switch n.kind {
		case validatorKind:
			if err := r.recordVerdict(sl, n); err != nil {
				return err
			}
			continue
		case gateKind:
			if sl.dec == nil || !sl.dec.update {
				continue
			}
		}
		if r.g.reducer != nil {
			r.state = r.g.reducer(r.state, sl.out)
			continue
		}
		updates++
		if updates == 2 {
			return fmt.Errorf("%w: nodes %q and %q ran in the same step and both returned an update; give the graph a reducer with SetReducer",
				ErrConflictingUpdates, r.g.name(r.frontier[first]), n.name)
		}
		first = i
	}
	if updates == 1 {
		r.state = r.slots[first].out
	}
	for i := range r.slots {
		var zero S
		r.slots[i].out = zero
		r.slots[i].done = false
	}
	if r.emit != nil && !r.emit(Event[S]{Kind: EventUpdate, Step: r.step, State: r.state}) {
		return r.stopped()
	}
	return nil
}

// recordVerdict stores the verdict of validator n for its gates.
func (r *run[S]) recordVerdict(sl *slot[S], n *node[S]) error {
	gi := sl.nctx.info.gate
	if !gi.hasVerdict {
		return nil
	}
	v := gi.verdict
	v.Validator, v.Key = n.name, gi.key
	if v.Severity == SeverityCritical {
		v.Severity = n.val.severity
	}
	if v.Mode == ModeDefault {
		v.Mode = n.val.mode
	}
	v.Mode = modeFor(v.Mode, v.Severity)
	r.gs.verdicts[n.val.slot] = verdictSlot{v: v, ok: true}
	r.gs.dirty = true
	if r.emit != nil {
		ev := new(Verdict)
		*ev = v
		if !r.emit(Event[S]{Kind: EventVerdict, Step: r.step, Node: n.name, Duration: sl.dur, Verdict: ev}) {
			return r.stopped()
		}
	}
	return nil
}

// routeGate carries out gate n's decision d.
func (r *run[S]) routeGate(n *node[S], d *gateDecision) error {
	gs, gn := r.gs, n.gate
	gs.dirty = true
	if d.reset {
		gs.log = append(gs.log, &GateOutcome{Gate: n.name, Step: r.step, Decision: GateReset, MaxRetries: d.out.MaxRetries, Targets: d.out.Targets})
		for _, s := range d.targets {
			t := &gs.tg[s]
			t.Context, t.Retries, t.Tries = t.Context+1, 0, 0
		}
	}
	gs.log = append(gs.log, &d.out)
	gs.warnings = append(gs.warnings, d.out.Warnings...)
	switch d.out.Decision {
	case GatePassed, GateSkipped:
		gs.clearVerdicts(gn, false)
		if r.emit != nil && !r.emit(Event[S]{Kind: EventGatePassed, Step: r.step, Node: n.name, Gate: &d.out}) {
			return r.stopped()
		}
		return r.route(n)
	case GateRetry:
		gs.clearVerdicts(gn, gn.cfg.Rerun == RerunFailedOnly)
		for _, s := range d.targets {
			gs.retry(s, d.out.Feedback, !d.reset)
			spec := gs.gg.targets[s]
			if r.emit != nil && !r.emit(Event[S]{Kind: EventGateRetry, Step: r.step, Node: n.name, To: spec.name, Gate: &d.out}) {
				return r.stopped()
			}
			if spec.idx != startIdx {
				r.add(spec.idx)
				continue
			}
			if r.source() == nil {
				return fmt.Errorf("gate %q retries %s: %w; run the graph WithSource to give it a source function", n.name, Start, ErrNotRetryable)
			}
			gs.restart = true
		}
		gs.delay = max(gs.delay, gn.cfg.Backoff.Delay(d.out.Retries))
		return nil
	case GateFailed:
		gs.clearVerdicts(gn, false)
		if r.emit != nil && !r.emit(Event[S]{Kind: EventGateExhausted, Step: r.step, Node: n.name, Gate: &d.out}) {
			return r.stopped()
		}
		if gn.failTo >= 0 {
			r.add(gn.failTo)
			return nil
		}
		return fmt.Errorf("%w: gate %q after %d retries of %s; last feedback:\n%s",
			ErrMaxRetries, n.name, d.out.Retries, strings.Join(d.out.Targets, ", "), d.out.Feedback)
	}
	return fmt.Errorf("%w: gate %q: the escalation after %d retries of %s was answered \"abort\"",
		ErrAborted, n.name, d.out.Retries, strings.Join(d.out.Targets, ", "))
}

// afterGates finishes a step of a graph with gates: it waits out the
// longest backoff asked for, then re-runs the source if Start was retried.
func (r *run[S]) afterGates() error {
	gs := r.gs
	gs.retried = gs.retried[:0]
	if d := gs.delay; d > 0 {
		gs.delay = 0
		if err := Sleep(r.ctx, d); err != nil {
			return fmt.Errorf("statgraph: stopped while waiting %v to retry after step %d: %w", d, r.step, err)
		}
	}
	if !gs.restart {
		return nil
	}
	gs.restart = false
	input, err := r.source()(r.ctx)
	if err != nil {
		return fmt.Errorf("statgraph: source of the run's input, retried by a gate: %w", err)
	}
	r.state = input
	gs.recordStart(input, r.step)
	return r.route(&r.g.start)
}

// recordStart records a run of the source when a gate may retry Start.
func (gs *gateRun[S]) recordStart(input S, step int) {
	if gs.gg.startSlot >= 0 {
		gs.recordTry(gs.gg.startSlot, input, step)
	}
}

// recordTry records a run of target slot s that returned out.
func (gs *gateRun[S]) recordTry(s int, out S, step int) {
	t := &gs.tg[s]
	if !t.Pending && t.Tries > 0 {
		t.Context, t.Retries, t.Tries, t.Hint = t.Context+1, 0, 0, ""
	}
	t.Pending = false
	t.Tries++
	gs.history = append(gs.history, tryRecord[S]{node: t.Node, context: t.Context, try: t.Tries, step: step, out: out})
	t.Last = len(gs.history) - 1
	gs.dirty = true
}

// retry sends target slot s back with feedback; count is false for the
// retry that follows an escalation's reset. Two gates retrying one target
// in one step count once, and their feedback is joined.
func (gs *gateRun[S]) retry(s int, feedback string, count bool) {
	t := &gs.tg[s]
	if slices.Contains(gs.retried, s) {
		t.Hint += "\n\n" + feedback
	} else {
		gs.retried = append(gs.retried, s)
		if count {
			t.Retries++
		}
		t.Total++
		t.Hint = feedback
	}
	t.Pending = true
	if t.Last >= 0 {
		gs.history[t.Last].feedback = t.Hint
		gs.feedbackChanged(t.Last)
	}
}

// clearVerdicts forgets the verdicts gate gn consumed, keeping passing ones
// when keepPassed is set.
func (gs *gateRun[S]) clearVerdicts(gn *gateNode[S], keepPassed bool) {
	for _, vi := range gn.validators {
		vs := &gs.verdicts[gs.g.nodes[vi].val.slot]
		if !keepPassed || !vs.v.Passed {
			*vs = verdictSlot{}
		}
	}
}

// upcoming returns the retry context, try number and hint of the next run
// of target slot s.
func (gs *gateRun[S]) upcoming(s int) (context, try int, hint string) {
	t := gs.tg[s]
	switch {
	case t.Pending:
		return t.Context, t.Tries + 1, t.Hint
	case t.Tries > 0:
		return t.Context + 1, 1, ""
	}
	return t.Context, 1, ""
}
