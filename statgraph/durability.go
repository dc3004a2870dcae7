package statgraph

import (
	"context"
	"errors"
	"fmt"
)

// Durability says when a run on a graph with a checkpointer writes its
// checkpoints (LangGraph's durability modes).
type Durability uint8

const (
	// DurabilitySync, the default, writes each step's checkpoint before the
	// next step starts: a crash loses at most the step that was running.
	DurabilitySync Durability = iota
	// DurabilityAsync writes each step's checkpoint while the next step
	// runs (one write in flight at a time; a failed write fails the run at
	// the next step's save). A crash may also lose the last completed step,
	// except before a step of two or more tasks (parallel nodes, Sends),
	// which waits for that write and then stores each finished task's
	// update as under DurabilitySync. Invoke returns only once every write
	// is durable.
	DurabilityAsync
	// DurabilityExit writes checkpoints only when the run stops: at the
	// end, at an interrupt, when a node fails, or when the run is stopped
	// between steps (a cancelled ctx, the step limit); the run's input is
	// not written. A subgraph's run writes only when it stops unfinished
	// (an interrupt, a failure), as in LangGraph, where a nested graph
	// writes at exit only then. A crash loses everything since the
	// thread's last checkpoint (for a new thread, everything), and every
	// task of the step that was running runs again. A failure while
	// routing after a step loses the steps since the last checkpoint too.
	DurabilityExit
)

// WithDurability sets when the run writes its checkpoints; the default is
// DurabilitySync. A subgraph's run follows its parent's.
func WithDurability(d Durability) RunOption { return func(c *runConfig) { c.durability = d } }

// saveLoop writes the checkpoint after a super-step, or under
// DurabilityExit notes that it was not written.
func (r *run[S]) saveLoop(ints []Interruption) error {
	if s := r.saver; s.mode == DurabilityExit && ints == nil {
		s.skipped++
		s.boundary = r.step
		return nil
	}
	return r.saveStep(sourceLoop, r.step, r.next, nil, ints)
}

// saveInput writes the checkpoint of the run's input, or under
// DurabilityExit notes that it was not written: that mode writes only when
// the run stops (and a subgraph's run only when it stops unfinished).
func (r *run[S]) saveInput(pending []PendingWrite, ints []Interruption) error {
	if s := r.saver; s.mode == DurabilityExit && ints == nil {
		s.skipped++
		s.boundary = r.step
		return nil
	}
	r.paused = ints != nil
	return r.saveStep(sourceInput, r.step, r.frontier, pending, ints)
}

// put stores cp: now, or under DurabilityAsync in the background, after the
// previous background write finished.
func (s *saver[S]) put(ctx context.Context, cp *Checkpoint) error {
	if err := s.wait(); err != nil {
		return err
	}
	if s.mode != DurabilityAsync || cp.Source != sourceLoop || cp.Interrupts != nil || cp.Pending != nil {
		if err := s.cp.Put(ctx, cp); err != nil {
			return fmt.Errorf("statgraph: save checkpoint %d of thread %q: %w", cp.ID, s.thread, err)
		}
		return nil
	}
	ch := make(chan error, 1)
	s.inflight = ch
	go func() {
		if err := s.cp.Put(ctx, cp); err != nil {
			ch <- fmt.Errorf("statgraph: save checkpoint %d of thread %q (written in the background): %w", cp.ID, s.thread, err)
			return
		}
		ch <- nil
	}()
	return nil
}

// wait waits for the background write, if any, and returns its error.
func (s *saver[S]) wait() error {
	if s.inflight == nil {
		return nil
	}
	err := <-s.inflight
	s.inflight = nil
	return err
}

// settle ends a run's saving: it waits for the background write and, under
// DurabilityExit, writes the steps not yet saved when the run stopped
// between steps. err is the run's error; the result adds any save error.
func (r *run[S]) settle(err error) error {
	s := r.saver
	if werr := s.wait(); werr != nil {
		return errors.Join(err, werr)
	}
	if s.skipped == 0 || s.boundary != r.step || (r.cfg.sub && err == nil) {
		return err
	}
	// The frontier is the one the saved step leads to. Save even when the
	// run's ctx was cancelled: that is one of the exits this mode saves at.
	r.ctx = context.WithoutCancel(r.ctx)
	if serr := r.saveStep(sourceLoop, r.step, r.frontier, nil, nil); serr != nil {
		return errors.Join(err, serr)
	}
	return err
}
