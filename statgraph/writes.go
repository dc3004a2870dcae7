package statgraph

import (
	"context"
	"fmt"
	"sync"
)

// Each task of a step with two or more tasks (parallel nodes, Sends) has
// its update stored against the step's checkpoint as soon as it finishes
// (Checkpointer.PutWrites), so that a process killed in the middle of the
// step resumes with only the unfinished tasks. A step with one task writes
// nothing extra: its checkpoint follows at once.
//
// By durability mode (LangGraph's durability="sync" | "async" | "exit"):
//   - DurabilitySync and DurabilityAsync store each finished task's update.
//     Under DurabilityAsync the step's checkpoint may still be in flight
//     when the step starts; a step with two or more tasks first waits for
//     it, so that the updates have a stored checkpoint to belong to. A
//     process killed mid-step then runs again only its unfinished tasks.
//   - DurabilityExit stores nothing until the run stops, so there is no
//     checkpoint to store updates against: a process killed mid-step runs
//     every task again, with every step since the run's input.

// taskWrites collects the first failure to store a task's update, from the
// goroutines of a step's tasks.
type taskWrites struct {
	mu  sync.Mutex
	err error
}

// putsWrites reports whether the step about to run stores each finished
// task's update at once: it has two or more tasks, the run saves every
// step (DurabilitySync or DurabilityAsync), and the checkpoint the step
// starts from is stored. Under DurabilityAsync it first waits for that
// checkpoint's write; a failure of it is kept for writeErr, and no update
// is stored.
func (r *run[S]) putsWrites() bool {
	s := r.saver
	if s == nil || len(r.slots) < 2 || s.mode == DurabilityExit || s.skipped != 0 || s.lastID == 0 || s.parent != s.lastID {
		return false
	}
	if r.writes == nil {
		r.writes = new(taskWrites)
	}
	if err := s.wait(); err != nil {
		r.writes.err = err
	}
	return true
}

// putWrite stores the update of slot i, if its task succeeded, against the
// step's checkpoint. It runs on the task's goroutine; a failure is kept for
// writeErr.
func (r *run[S]) putWrite(i int) {
	if r.slots[i].err != nil {
		return
	}
	r.writes.mu.Lock()
	failed := r.writes.err != nil
	r.writes.mu.Unlock()
	if failed {
		return
	}
	ws, err := r.slotWrites(i, r.keepsValues())
	if err == nil && len(ws) > 0 {
		s := r.saver
		if err = s.cp.PutWrites(r.ctx, s.thread, s.lastID, ws); err != nil {
			err = fmt.Errorf("statgraph: save the update of task %q against checkpoint %d of thread %q: %w", ws[0].Node, s.lastID, s.thread, err)
		}
	}
	if err != nil {
		r.writes.mu.Lock()
		if r.writes.err == nil {
			r.writes.err = err
		}
		r.writes.mu.Unlock()
	}
}

// writeErr returns the first failure of putWrite in the step and resets it.
func (r *run[S]) writeErr() error {
	r.writes.mu.Lock()
	defer r.writes.mu.Unlock()
	err := r.writes.err
	r.writes.err = nil
	return err
}

// saveUnfinished saves a step that did not complete. A step that paused
// writes a checkpoint of its own, with the interrupts and the updates of
// the tasks that finished. A failed step writes none, as LangGraph does
// (test_pending_writes_resume, "no new checkpoints saved"): the updates of
// its finished tasks and the resume values it was given are added to the
// checkpoint the step started from, so that retrying a failed thread adds
// nothing to its history. Only when that checkpoint was not written
// (DurabilityExit) is one written now.
func (r *run[S]) saveUnfinished(failed bool, raised []Interruption, put bool) error {
	s := r.saver
	if !failed || s.skipped != 0 || s.lastID == 0 || s.parent != s.lastID {
		pending, err := r.pendingWrites()
		if err != nil {
			return err
		}
		return r.saveStep(sourceLoop, r.step-1, r.frontier, pending, raised)
	}
	if err := s.wait(); err != nil {
		return err
	}
	var ws []PendingWrite
	keep := r.keepsValues()
	for i := range r.slots {
		// A task's update is stored already when it was restored, or
		// stored as it finished (put); a handled failure is not.
		if r.slots[i].done || (put && !r.slots[i].handled) {
			continue
		}
		w, err := r.slotWrites(i, keep)
		if err != nil {
			return err
		}
		ws = append(ws, w...)
	}
	ws = append(ws, r.resumeRecords()...)
	if len(ws) == 0 {
		return nil
	}
	if err := s.cp.PutWrites(context.WithoutCancel(r.ctx), s.thread, s.lastID, ws); err != nil {
		return fmt.Errorf("statgraph: save the updates of step %d against checkpoint %d of thread %q: %w", r.step, s.lastID, s.thread, err)
	}
	return nil
}

// keepsValues reports whether the run's checkpointer keeps live values.
func (r *run[S]) keepsValues() bool {
	vk, ok := r.saver.cp.(valueKeeper)
	return ok && vk.keepsValues()
}

// slotWrites returns the pending-write entries of slot i's update: the
// update and, for a command node, its Goto.
func (r *run[S]) slotWrites(i int, keep bool) ([]PendingWrite, error) {
	sl := &r.slots[i]
	if sl.handled {
		return []PendingWrite{{Node: handledRecord + r.taskName(i), Update: encodeFailure(sl.err)}}, nil
	}
	if sl.err != nil {
		return nil, nil
	}
	pw := PendingWrite{Node: r.taskName(i)}
	if keep {
		pw.Value = sl.out
	} else {
		b, err := r.g.codec.Marshal(sl.out)
		if err != nil {
			return nil, fmt.Errorf("statgraph: encode update of node %q: %w", pw.Node, err)
		}
		pw.Update = b
	}
	out := []PendingWrite{pw}
	gw, ok, err := r.gotoWrite(i)
	if err != nil {
		return nil, err
	}
	if ok {
		out = append(out, gw)
	}
	return out, nil
}
