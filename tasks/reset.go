package tasks

import (
	"errors"
	"fmt"
)

// ErrNotResettable means Reset was asked to reset a task that is neither
// failed nor blocked.
var ErrNotResettable = errors.New("only failed or blocked tasks can be reset")

// Reset sends the failed or blocked units among ids back to pending, so the
// next run takes them up again: their status becomes pending and
// status_reason, retry_count and failed_at are removed (error_history
// stays, as a record; the run store keeps every attempt). An id may name a
// task with subtasks, which resets its failed and blocked subtasks. Units
// blocked only because of a unit reset here (directly or down a chain) are
// reset too. Reset returns the ids it reset, in file order. When an id
// names no task (ErrNoTask), or a task with nothing failed or blocked in it
// (ErrNotResettable), it returns the error and changes nothing. The change
// is in memory until Save. Reset is safe for concurrent use.
func (f *File) Reset(ids ...string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	want := map[string]bool{}
	for _, id := range ids {
		t, err := f.lookup(id)
		if err != nil {
			return nil, err
		}
		found := false
		for _, u := range unitsOf(t) {
			if resettable(u.Status) {
				want[u.ID], found = true, true
			}
		}
		if !found {
			st := t.Status
			if st == "" {
				st = StatusPending
			}
			return nil, fmt.Errorf("%w: task %s is %s", ErrNotResettable, id, st)
		}
	}
	return f.reset(want), nil
}

// ResetFailed sends every failed or blocked unit back to pending, as Reset
// does, and returns their ids in file order. It is safe for concurrent use.
func (f *File) ResetFailed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	want := map[string]bool{}
	for _, t := range f.byID {
		if len(t.Subtasks) == 0 && resettable(t.Status) {
			want[t.ID] = true
		}
	}
	return f.reset(want)
}

// reset resets the units in want and the blocked units that depend on one
// of them; f.mu is held.
func (f *File) reset(want map[string]bool) []string {
	units := f.units()
	for grew := true; grew; {
		grew = false
		for _, u := range units {
			if want[u.ID] || u.Task.Status != StatusBlocked {
				continue
			}
			for _, dep := range u.Deps {
				if want[dep] {
					want[u.ID], grew = true, true
					break
				}
			}
		}
	}
	var done []string
	for _, u := range units {
		if !want[u.ID] {
			continue
		}
		t := f.byID[u.ID]
		f.markDirty(t.ID)
		f.setStatus(t, StatusPending, "")
		t.RetryCount, t.FailedAt, t.ParkedUntil = 0, nil, nil
		t.obj.remove("retry_count")
		t.obj.remove("failed_at")
		t.obj.remove("parked_until")
		done = append(done, u.ID)
	}
	return done
}

// unitsOf returns the units a task stands for: its subtasks, or itself.
func unitsOf(t *Task) []*Task {
	if len(t.Subtasks) == 0 {
		return []*Task{t}
	}
	out := make([]*Task, len(t.Subtasks))
	for i := range t.Subtasks {
		out[i] = &t.Subtasks[i]
	}
	return out
}

func resettable(status string) bool { return status == StatusFailed || status == StatusBlocked }
