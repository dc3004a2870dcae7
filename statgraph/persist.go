package statgraph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// saver writes a run's checkpoints. It remembers the last state saved so
// that the next checkpoint can be a delta against it.
type saver[S any] struct {
	g          *Graph[S]
	cp         Checkpointer
	thread     string
	lastID     int64 // the thread's highest checkpoint id
	parent     int64 // the checkpoint the next one follows (lastID, except after a fork)
	prev       S     // state of checkpoint parent
	havePrev   bool  // prev is valid
	fullBytes  int   // size of the last full state written
	deltaBytes int   // bytes of the deltas written since then, rowOverhead each included
	// sinceCounters counts checkpoints written since the last one with
	// Counters.
	sinceCounters int
	// The checkpoints where the chains of the next checkpoint's state,
	// and counters start (0: unknown); see Checkpoint.Base.
	stateBase, countersBase int64
	// Durability (durability.go): the mode, the steps not saved under
	// DurabilityExit, and the write in flight under DurabilityAsync.
	mode     Durability
	skipped  int
	boundary int
	inflight chan error
}

// based sets the chain starts after a load of checkpoint c, which the next
// checkpoint follows.
func (s *saver[S]) based(c *Checkpoint) {
	s.stateBase, s.countersBase = c.Base, c.Base
}

// valueKeeper is implemented by checkpointers that keep live state values
// instead of encoded bytes.
type valueKeeper interface{ keepsValues() bool }

// saveStep writes a checkpoint of the run after step completed steps, with
// next as the frontier.
func (r *run[S]) saveStep(source string, step int, next []int, pending []PendingWrite, ints []Interruption) error {
	s := r.saver
	cp := &Checkpoint{
		Thread:  s.thread,
		ID:      s.lastID + 1,
		Parent:  s.parent,
		Step:    step,
		Source:  source,
		Created: time.Now().UTC(),
		Next:    r.taskNames(next),
		Pending: pending,
	}
	if rec, err := r.records(); err != nil {
		return err
	} else if rec != nil {
		cp.Pending = slices.Concat(pending, rec)
	}
	if err := s.encode(cp, r.state); err != nil {
		return err
	}
	full := !cp.Delta && cp.Value == nil // a full state: counters with it, so Base stays at it
	// A checkpoint that saves a step again (after a failure) stores the
	// counters: they cannot be derived from its parent's frontier.
	if full || source != sourceLoop || pending != nil || ints != nil || step < r.step || s.skipped > 0 || s.sinceCounters >= countersEvery-1 {
		cp.Counters = make(map[string]int, len(r.counters))
		for i, c := range r.counters {
			if c > 0 {
				cp.Counters[r.g.nodes[i].name] = c
			}
		}
		s.sinceCounters, s.countersBase = 0, cp.ID
	} else {
		s.sinceCounters++
	}
	if len(ints) > 0 {
		cp.Interrupts = slices.Clone(ints)
	}
	if len(r.resumes) > 0 {
		cp.Resumes = maps.Clone(r.resumes)
	}
	cp.Base = min(s.stateBase, s.countersBase)
	if err := s.put(r.ctx, cp); err != nil {
		return err
	}
	s.skipped = 0
	s.lastID, s.parent, s.prev, s.havePrev = cp.ID, cp.ID, r.state, true
	if r.emit != nil {
		if !r.emit(Event[S]{Kind: EventCheckpoint, Step: step, CheckpointID: cp.ID, Thread: s.thread}) {
			return r.stopped()
		}
	}
	return nil
}

// encode stores state in cp: as a value, as a delta against the previous
// checkpoint, or in full.
func (s *saver[S]) encode(cp *Checkpoint, state S) error {
	if vk, ok := s.cp.(valueKeeper); ok && vk.keepsValues() {
		cp.Value, s.stateBase = state, cp.ID
		return nil
	}
	// A delta is written while the deltas since the last full state, with
	// rowOverhead for each, add up to less than that state's size: so the
	// full writes cost no more than the deltas did (a step's cost follows
	// what changed, amortised, and a thread's size is linear in its steps
	// however its state grows), and loading a checkpoint reads less than
	// twice its full state's bytes (plus the rows of Base's chain).
	if s.g.delta != nil && s.havePrev {
		d, ok, err := s.g.delta.MarshalDelta(s.prev, state)
		if err != nil {
			return fmt.Errorf("statgraph: encode state for checkpoint %d of thread %q: %w", cp.ID, s.thread, err)
		}
		if ok && s.deltaBytes+len(d)+rowOverhead < s.fullBytes {
			cp.State, cp.Delta = d, true
			s.deltaBytes += len(d) + rowOverhead
			return nil
		}
	}
	b, err := s.g.codec.Marshal(state)
	if err != nil {
		return fmt.Errorf("statgraph: encode state for checkpoint %d of thread %q: %w", cp.ID, s.thread, err)
	}
	cp.State, s.fullBytes, s.deltaBytes, s.stateBase = b, len(b), 0, cp.ID
	return nil
}

// restore loads the thread's checkpoint (the latest, or the one chosen with
// FromCheckpoint) and reports whether the run continues from it. A thread
// whose latest run finished starts a new run from the input; an unfinished
// one continues with input merged in (see WithThread).
func (r *run[S]) restore(ctx context.Context, input S, resume *resumeArg) (continued, merged bool, err error) {
	s := r.saver
	latest, err := s.cp.Get(ctx, s.thread, 0)
	if errors.Is(err, ErrNoCheckpoint) {
		if r.cfg.from != 0 || resume != nil {
			return false, false, fmt.Errorf("statgraph: thread %q has no checkpoints: %w", s.thread, ErrNoCheckpoint)
		}
		return false, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("statgraph: load thread %q: %w", s.thread, err)
	}
	s.lastID, s.parent = latest.ID, latest.ID
	c := latest
	if r.cfg.from != 0 {
		if c, err = s.cp.Get(ctx, s.thread, r.cfg.from); err != nil {
			return false, false, fmt.Errorf("statgraph: load checkpoint %d of thread %q: %w", r.cfg.from, s.thread, err)
		}
	}
	if r.cfg.from == 0 && resume == nil && len(c.Next) == 0 {
		// The last run finished: a new run starts on the same thread.
		return false, false, r.loadPrev(ctx, c)
	}
	if resume == nil && r.cfg.from == 0 && waiting(c) {
		return false, false, fmt.Errorf("%w: thread %q is waiting at interrupt %s; continue it with WithResume(value)", ErrInterrupted, s.thread, c.Interrupts[0].ID)
	}
	chain, err := readChain(ctx, s.cp, c)
	if err != nil {
		return false, false, err
	}
	state, err := loadState(ctx, chain, r.g.codec, c)
	if err != nil {
		return false, false, err
	}
	r.state, s.prev, s.havePrev = state, state, true
	s.based(c)
	if resume == nil && r.cfg.from == 0 && r.g.reducer != nil {
		r.state = r.g.reducer(state, input)
		if merged, err = r.changed(state, r.state); err != nil {
			return false, false, err
		}
	}
	r.step = c.Step
	// The counters are the thread's, whichever checkpoint the run continues
	// from, so that a replayed node's subgraph gets a thread of its own.
	if c != latest {
		if chain, err = readChain(ctx, s.cp, latest); err != nil {
			return false, false, err
		}
	}
	if err := r.loadCounters(ctx, chain, latest); err != nil {
		return false, false, err
	}
	if len(c.Resumes) > 0 {
		r.resumes = maps.Clone(c.Resumes)
	}
	if r.pending, err = r.loadRecords(ctx, c); err != nil {
		return false, false, err
	}
	for _, name := range r.unsent(c.Next) {
		i, ok := r.g.byName[name]
		if !ok {
			return false, false, fmt.Errorf("%w: thread %q checkpoint %d names node %q, which the graph does not have", ErrCorruptCheckpoint, s.thread, c.ID, name)
		}
		r.frontier = append(r.frontier, i)
	}
	slices.Sort(r.frontier)
	if resume != nil {
		if err := r.applyResume(c, resume); err != nil {
			return false, false, err
		}
	}
	if r.cfg.from != 0 {
		s.parent = c.ID
		return true, false, r.saveStep(sourceFork, r.step, r.frontier, r.pending, nil)
	}
	return true, merged, nil
}

// changed reports whether the states a and b differ, by their encodings.
func (r *run[S]) changed(a, b S) (bool, error) {
	ea, err := r.g.codec.Marshal(a)
	if err != nil {
		return false, fmt.Errorf("statgraph: encode the state of thread %q: %w", r.cfg.thread, err)
	}
	eb, err := r.g.codec.Marshal(b)
	if err != nil {
		return false, fmt.Errorf("statgraph: encode the state of thread %q with the run's input merged: %w", r.cfg.thread, err)
	}
	return !bytes.Equal(ea, eb), nil
}

// loadPrev remembers c's state as the base for the next delta, and c's
// counters as the new run's.
func (r *run[S]) loadPrev(ctx context.Context, c *Checkpoint) error {
	chain, err := readChain(ctx, r.saver.cp, c)
	if err != nil {
		return err
	}
	state, err := loadState(ctx, chain, r.g.codec, c)
	if err != nil {
		return err
	}
	r.saver.prev, r.saver.havePrev = state, true
	r.saver.based(c)
	return r.loadCounters(ctx, chain, c)
}

// loadCounters sets the run's execution counters to those of checkpoint
// c, read through store. They count every run and branch of the thread:
// a new run, a replay and a fork start from the latest checkpoint's, which
// are therefore the highest, so each execution of a node has a count of
// its own (a subgraph node names its child's thread after it).
func (r *run[S]) loadCounters(ctx context.Context, store Checkpointer, c *Checkpoint) error {
	counters, err := loadCounters(ctx, store, c)
	if err != nil {
		return err
	}
	for name, n := range counters {
		if i, ok := r.g.byName[name]; ok {
			r.counters[i] = n
		}
	}
	return nil
}

// restorePending fills the slots of nodes whose updates were saved as
// pending writes, so they are not run again.
func (r *run[S]) restorePending() {
	for i := range r.slots {
		sl := &r.slots[i]
		sl.done, sl.err, sl.handled = false, nil, false
		if sl.nctx.info.extra != nil {
			sl.nctx.info.extra = nil
		}
		for _, pw := range r.pending {
			if r.restoreGoto(i, pw) {
				continue
			}
			if pw.Node == handledRecord+r.taskName(i) {
				if err, ok := failureOf(pw.Update); ok {
					sl.err, sl.done = err, true
				}
				continue
			}
			if pw.Node != r.taskName(i) {
				continue
			}
			if pw.Value != nil {
				if v, ok := pw.Value.(S); ok {
					sl.out, sl.done = v, true
				}
			} else if v, err := r.g.codec.Unmarshal(pw.Update); err == nil {
				sl.out, sl.done = v, true
			}
		}
	}
}

// pendingWrites encodes the updates of the slots that finished.
func (r *run[S]) pendingWrites() ([]PendingWrite, error) {
	var out []PendingWrite
	keep := r.keepsValues()
	for i := range r.slots {
		ws, err := r.slotWrites(i, keep)
		if err != nil {
			return nil, err
		}
		out = append(out, ws...)
	}
	return out, nil
}

// encodeJSON is the encoding of interrupt payloads and resume values.
func encodeJSON(what string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("statgraph: %s is not JSON-encodable: %w", what, err)
	}
	return b, nil
}

// loadCounters returns the execution counters as of checkpoint c, adding up
// the steps since the nearest ancestor that stored them.
func loadCounters(ctx context.Context, cp Checkpointer, c *Checkpoint) (map[string]int, error) {
	var ran []*Checkpoint // ancestors whose Next ran, nearest first
	for c.Counters == nil && c.Parent != 0 {
		p, err := cp.Get(ctx, c.Thread, c.Parent)
		if err != nil {
			return nil, fmt.Errorf("%w: thread %q checkpoint %d: parent %d: %w", ErrCorruptCheckpoint, c.Thread, c.ID, c.Parent, err)
		}
		ran = append(ran, p)
		c = p
	}
	out := maps.Clone(c.Counters)
	if out == nil {
		out = map[string]int{}
	}
	for _, p := range ran {
		for _, name := range p.Next {
			out[name]++
		}
	}
	return out, nil
}

// nextNames returns the names of the nodes in next; a one-node frontier
// shares a slice made at Compile.
func (r *run[S]) nextNames(next []int) []string {
	if len(next) == 1 {
		return r.g.single[next[0]]
	}
	return r.names(next)
}
