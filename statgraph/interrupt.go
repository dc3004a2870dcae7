package statgraph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Interruption is a pause of a run, raised by a node (Interrupt) or by
// WithInterruptBefore/WithInterruptAfter, waiting for WithResume. Checkpoints
// keep the pending ones (Checkpoint.Interrupts).
type Interruption struct {
	// ID addresses the interrupt in a ResumeMap: "<node>:<step>:<k>" for
	// the k-th Interrupt call (from 0) of a node in a step, where the
	// node's second and later tasks of one step (Sends) are "<node>[<j>]";
	// "<node>:before:<step>" and "<node>:after:<step>" for the pauses
	// around it; a subgraph's own IDs prefixed with the node's task and
	// "|".
	ID      string
	Node    string          // the node that paused, or that the pause is before or after
	When    string          // "before", "after" or "inside" (raised by Interrupt)
	Payload json.RawMessage // what the node passed to Interrupt, as JSON
}

// interruptedError is returned by Invoke and yielded by Stream when a run
// paused. It wraps ErrInterrupted; its Interrupts method, like WithResult's
// Result, lists the pauses.
type interruptedError struct {
	Thread  string
	pending []Interruption
}

// Interrupts returns the pauses the run waits on, for errors.As (see
// ErrInterrupted).
func (e *interruptedError) Interrupts() []Interruption { return e.pending }

func (e *interruptedError) Error() string {
	ids := make([]string, len(e.pending))
	for i, in := range e.pending {
		ids[i] = in.ID
	}
	return fmt.Sprintf("statgraph: thread %q paused at %s; continue it with WithResume(value)", e.Thread, strings.Join(ids, ", "))
}

func (e *interruptedError) Unwrap() error { return ErrInterrupted }

// Resume continues the thread named by WithThread among opts, which must be
// paused at an interrupt, giving value to it (LangGraph's
// invoke(Command(resume=value))): it is Invoke with WithResume(value) and
// no input, the run going on from the thread's checkpoint. With several
// interrupts pending, value must be a ResumeMap naming each one answered by
// ID. It returns what Invoke returns; a thread that is not paused is an
// error ("statgraph: thread is not interrupted"). To stream a resumed run,
// pass WithResume to Stream.
func (g *Graph[S]) Resume(ctx context.Context, value any, opts ...RunOption) (S, error) {
	var zero S
	return g.Invoke(ctx, zero, append(opts, WithResume(value))...)
}

// ResumeMap answers several pending interrupts at once, by interrupt ID.
type ResumeMap map[string]any

type resumeArg struct{ value any }

// Interrupt pauses the run from inside a node and returns the value given to
// WithResume once the run continues. The first time it is reached it returns
// the zero T and an error wrapping ErrInterrupted, which the node must
// return as its own error; the run then saves a checkpoint and Invoke
// returns an error wrapping ErrInterrupted, and WithResult's Result lists
// the pause with payload (encoded as JSON).
//
// On WithResume the node runs again from its start, and this call returns the
// resume value decoded into T. Whatever the node did before calling Interrupt is
// therefore done twice: keep it idempotent, or do it after Interrupt. A node may
// call Interrupt several times; each call is a separate interrupt, matched by
// order. Interrupt needs a graph compiled WithCheckpointer.
func Interrupt[T any](ctx context.Context, payload any) (T, error) {
	var zero T
	info, ok := ctx.Value(infoKey{}).(*nodeInfo)
	if !ok {
		return zero, errors.New("statgraph: Interrupt called outside a running node")
	}
	id := fmt.Sprintf("%s:%d:%d", info.task(), info.step, info.calls)
	info.calls++
	if raw, ok := info.resumes[id]; ok {
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			return zero, Permanent(fmt.Errorf("statgraph: resume value for interrupt %s does not fit %T: %w", id, zero, err))
		}
		return v, nil
	}
	p, err := encodeJSON("interrupt payload", payload)
	if err != nil {
		return zero, Permanent(err)
	}
	in := Interruption{ID: id, Node: info.node, When: "inside", Payload: p}
	info.raised = append(info.raised, in)
	return zero, &interruptedError{pending: []Interruption{in}}
}

// applyResume records the resume values for checkpoint c's interrupts.
func (r *run[S]) applyResume(c *Checkpoint, arg *resumeArg) error {
	if len(c.Interrupts) == 0 {
		return fmt.Errorf("%w: thread %q (checkpoint %d)", errNotInterrupted, c.Thread, c.ID)
	}
	values, byID := arg.value.(ResumeMap)
	if !byID {
		if len(c.Interrupts) > 1 {
			ids := make([]string, len(c.Interrupts))
			for i, in := range c.Interrupts {
				ids[i] = in.ID
			}
			return fmt.Errorf("statgraph: thread %q has %d pending interrupts (%s): answer them by id with a statgraph.ResumeMap",
				c.Thread, len(ids), strings.Join(ids, ", "))
		}
		values = ResumeMap{c.Interrupts[0].ID: arg.value}
	}
	if r.resumes == nil {
		r.resumes = make(map[string][]byte, len(values))
	}
	for id, v := range values {
		var in *Interruption
		for i := range c.Interrupts {
			if c.Interrupts[i].ID == id {
				in = &c.Interrupts[i]
			}
		}
		if in == nil {
			return fmt.Errorf("statgraph: thread %q has no pending interrupt %q", c.Thread, id)
		}
		b, err := encodeJSON("resume value for "+id, v)
		if err != nil {
			return err
		}
		r.resumes[id] = b
		r.given = append(r.given, id)
		if in.When == "before" {
			r.skipAhead = true
		}
	}
	return nil
}

// resumeRecord prefixes the pending-write entry that keeps a resume value
// given to a step that then failed (the interrupt's ID follows), so that
// the thread continues without WithResume, as from a step that paused.
const resumeRecord = "__resume__:"

// resumeRecords returns the entries of the resume values given to this
// run with WithResume.
func (r *run[S]) resumeRecords() []PendingWrite {
	out := make([]PendingWrite, 0, len(r.given))
	for _, id := range r.given {
		if b, ok := r.resumes[id]; ok {
			out = append(out, PendingWrite{Node: resumeRecord + id, Update: b})
		}
	}
	return out
}

// waiting reports whether checkpoint c has an interrupt that no resume
// value answers.
func waiting(c *Checkpoint) bool {
	for _, in := range c.Interrupts {
		if _, ok := c.Resumes[in.ID]; !ok && !slices.ContainsFunc(c.Pending, func(pw PendingWrite) bool { return pw.Node == resumeRecord+in.ID }) {
			return true
		}
	}
	return false
}

// pauseBefore pauses the run if a node of the frontier is flagged with
// WithInterruptBefore. The pause is saved with the frontier's checkpoint
// when the run wrote it (see pauses); otherwise, as when a thread is
// continued, it is saved now.
func (r *run[S]) pauseBefore() error {
	ints := r.pauses(nil, r.frontier)
	if ints == nil {
		return nil
	}
	if !r.paused {
		if err := r.saveStep(sourceLoop, r.step, r.frontier, r.pending, ints); err != nil {
			return err
		}
	}
	return r.interrupted(ints)
}

// pauses returns the interrupts due after a step whose tasks (nodes and
// Sends) ran the nodes ran and that leads to next: a pause after a node of
// ran flagged with WithInterruptAfter (when anything is left to run), else a pause before
// the nodes of next flagged with WithInterruptBefore. They are saved on the
// step's own checkpoint, so that a pause adds no snapshot to the history.
func (r *run[S]) pauses(ran, next []int) []Interruption {
	var ints []Interruption
	if r.g.after != nil && (len(next) > 0 || len(r.sendList()) > 0) {
		for _, i := range ran {
			if r.g.after[i] {
				name := r.g.nodes[i].name
				ints = append(ints, Interruption{ID: fmt.Sprintf("%s:after:%d", name, r.step), Node: name, When: "after"})
			}
		}
	}
	if ints != nil || r.g.before == nil {
		return ints
	}
	// A pause already answered is not taken again: a sibling of the node
	// paused itself inside the step, and the step is being run again.
	before := func(i int) {
		name := r.g.nodes[i].name
		id := fmt.Sprintf("%s:before:%d", name, r.step+1)
		if _, answered := r.resumes[id]; !answered && !slices.ContainsFunc(ints, func(in Interruption) bool { return in.ID == id }) {
			ints = append(ints, Interruption{ID: id, Node: name, When: "before"})
		}
	}
	for _, i := range next {
		if r.g.before[i] {
			before(i)
		}
	}
	// The nodes of pending Sends pause too, once each.
	for _, t := range r.sendList() {
		if r.g.before[t.node] {
			before(t.node)
		}
	}
	return ints
}

func (r *run[S]) interrupted(ints []Interruption) error {
	if r.emit != nil {
		r.emit(Event[S]{Kind: EventInterrupt, Step: r.step, Interrupts: ints, Thread: r.cfg.thread})
	}
	return &interruptedError{Thread: r.cfg.thread, pending: ints}
}
