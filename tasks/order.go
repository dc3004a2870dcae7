package tasks

import "fmt"

// Unit is one runnable piece of work: a task without subtasks, or a
// subtask. A task with subtasks is not a unit; it is done when all its
// subtasks are.
type Unit struct {
	ID     string   // the full id, e.g. "3" or "3.2"
	Parent string   // the parent's id for a subtask, else ""
	Deps   []string // unit ids this unit waits for, in file order, without repeats
	Task   *Task    // the task in the File; its status fields change under the File's setters, so read those through File.Task
	// Hold, when not "", is why the unit is blocked whatever its
	// dependencies do: it depends on a task of another tag, or a problem
	// confined to its task (duplicate subtask ids, say) was found, with
	// that problem's file:line:col.
	Hold string
}

// Units flattens the file's tasks and subtasks into units in file order
// (a parent's subtasks in place of the parent) and resolves dependencies:
//
//   - a subtask's dependency given as a bare id ("2" or 2) names its sibling
//     subtask with that local id when there is one, else the task with that
//     full id; a dotted id ("3.1") is always a full id;
//   - a subtask also waits for everything its parent depends on;
//   - depending on a task that has subtasks means waiting for all of them.
//
// Dependencies that name nothing, the task itself, its own parent or its
// own subtask are left out; Load rejects files that have them. Units is
// safe to call concurrently with the setters and Save.
func (f *File) Units() []Unit {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.units()
}

// units is Units with f.mu held (or the File not yet shared).
func (f *File) units() []Unit {
	var units []Unit
	for i := range f.Tasks {
		t := &f.Tasks[i]
		if t.ID == "" || f.byID[t.ID] != t {
			continue
		}
		parentDeps := f.unitDeps(t, nil)
		if len(t.Subtasks) == 0 {
			units = append(units, Unit{ID: t.ID, Deps: parentDeps, Task: t, Hold: f.holds[t.ID]})
			continue
		}
		for j := range t.Subtasks {
			s := &t.Subtasks[j]
			if s.ID == "" || f.byID[s.ID] != s {
				continue
			}
			deps := f.unitDeps(s, append([]string(nil), parentDeps...))
			units = append(units, Unit{ID: s.ID, Parent: t.ID, Deps: deps, Task: s, Hold: f.holds[t.ID]})
		}
	}
	return units
}

// unitDeps appends the unit ids t's dependencies stand for to deps.
func (f *File) unitDeps(t *Task, deps []string) []string {
	for _, dep := range t.Dependencies {
		target := f.resolve(t, dep)
		if target == "" || target == t.ID || target == t.Parent || f.byID[target].Parent == t.ID {
			continue
		}
		if tt := f.byID[target]; len(tt.Subtasks) > 0 {
			for j := range tt.Subtasks {
				if s := &tt.Subtasks[j]; s.ID != "" && f.byID[s.ID] == s {
					deps = appendNew(deps, s.ID)
				}
			}
			continue
		}
		deps = appendNew(deps, target)
	}
	return deps
}

// Statuses returns the current status of every unit, keyed by unit id, as
// Next wants it. It is safe to call concurrently with the setters.
func (f *File) Statuses() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]string)
	for i := range f.Tasks {
		t := &f.Tasks[i]
		if len(t.Subtasks) == 0 {
			out[t.ID] = t.Status
		}
		for j := range t.Subtasks {
			out[t.Subtasks[j].ID] = t.Subtasks[j].Status
		}
	}
	return out
}

// resolve returns the full id that dependency dep of t names, or "".
func (f *File) resolve(t *Task, dep string) string {
	if t.Parent != "" {
		if _, ok := f.byID[t.Parent+"."+dep]; ok {
			return t.Parent + "." + dep
		}
	}
	if _, ok := f.byID[dep]; ok {
		return dep
	}
	return ""
}

func appendNew(list []string, s string) []string {
	for _, v := range list {
		if v == s {
			return list
		}
	}
	return append(list, s)
}

// Blocked is a unit that cannot run because a dependency will not finish.
type Blocked struct {
	ID     string
	Reason string // e.g. "dependency 2 failed"
}

// Step is what a dispatcher should do next.
type Step struct {
	Ready   []string  // runnable units whose dependencies are all done, in file order
	Blocked []Blocked // runnable units to mark blocked, in file order
}

// Runnable reports whether a unit with this status still has work to do:
// pending (or no status), in-progress or interrupted (both left by an
// earlier run that stopped), or parked (waiting for a usage limit's reset,
// see Task.ParkedUntil). Every other status, an unknown one included,
// does not run.
func Runnable(status string) bool {
	switch status {
	case "", StatusPending, StatusInProgress, StatusInterrupted, StatusParked:
		return true
	}
	return false
}

// Next decides, from the current status of every unit (a missing entry
// counts as pending), which runnable units are ready and which must become
// blocked. A unit is blocked when a dependency is failed, blocked or
// cancelled, or is itself about to be blocked in this Step, so a whole chain
// is blocked at once; the reason names the dependency ("dependency 2
// failed"). A unit with a Hold is blocked with the Hold as its reason. A
// dependency counts as finished when IsDone; a unit waiting on a deferred,
// review or unknown-status dependency is neither ready nor blocked. Next does not know which units the caller has already started:
// those still appear in Ready while their status is runnable, so the caller
// skips them (or passes a non-runnable status for them). Next only reads its
// arguments.
func Next(units []Unit, status map[string]string) Step {
	index := make(map[string]int, len(units))
	for i, u := range units {
		index[u.ID] = i
	}
	reason := make([]string, len(units)) // why a unit is blocked, "" if it is not
	done := make([]bool, len(units))     // reason is computed
	var visit func(i int) string
	visit = func(i int) string {
		if done[i] {
			return reason[i]
		}
		done[i] = true
		if !Runnable(status[units[i].ID]) {
			return ""
		}
		if units[i].Hold != "" {
			reason[i] = units[i].Hold
			return reason[i]
		}
		// A dependency that failed itself makes a better reason than one
		// that is only blocked in turn, so look for those first.
		for _, dep := range units[i].Deps {
			if st := status[dep]; st == StatusFailed || st == StatusBlocked || st == StatusCancelled {
				reason[i] = fmt.Sprintf("dependency %s %s", dep, st)
				return reason[i]
			}
		}
		for _, dep := range units[i].Deps {
			if j, ok := index[dep]; ok && visit(j) != "" {
				reason[i] = fmt.Sprintf("dependency %s blocked", dep)
				return reason[i]
			}
		}
		return reason[i]
	}

	var step Step
	for i, u := range units {
		if !Runnable(status[u.ID]) {
			continue
		}
		if r := visit(i); r != "" {
			step.Blocked = append(step.Blocked, Blocked{ID: u.ID, Reason: r})
			continue
		}
		ready := true
		for _, dep := range u.Deps {
			if !IsDone(status[dep]) {
				ready = false
				break
			}
		}
		if ready {
			step.Ready = append(step.Ready, u.ID)
		}
	}
	return step
}
