package tasks

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/statgraph/statgraph/internal/printable"
)

// Problem is one thing wrong with a tasks file. Line and Col are 1-based
// (see Position); TaskID is the full id of the task concerned, or "" when
// the problem is not about one task (or the task has no id).
type Problem struct {
	File    string
	Line    int
	Col     int
	TaskID  string
	Message string
}

// String renders the problem as "file:line:col: task id: message", on one
// line: control characters in it (a newline in an id, say) are escaped.
func (p Problem) String() string {
	if p.TaskID != "" {
		return printable.String(fmt.Sprintf("%s:%d:%d: task %s: %s", p.File, p.Line, p.Col, p.TaskID, p.Message))
	}
	return printable.String(fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Col, p.Message))
}

// ValidationError lists every problem found in a tasks file, sorted by
// position. Load and Parse return it as a *ValidationError.
type ValidationError struct {
	Problems []Problem
	Warnings []Problem // what would only have been warned about (see File.Warnings)
}

// Error lists the problems, one per line.
func (e *ValidationError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// maxListedIDs bounds the "known ids" list in an unknown-dependency message.
const maxListedIDs = 12

// checkGraph reports duplicate ids and bad dependencies: unknown ones (a
// problem confined to the task naming it), a task on itself, a subtask on its own parent or a parent on its own
// subtask, and cycles.
func (d *decoder) checkGraph(f *File) {
	var all []*Task // every task with an id, in file order
	for i := range f.Tasks {
		t := &f.Tasks[i]
		if t.ID != "" {
			all = append(all, t)
		}
		for j := range t.Subtasks {
			if t.Subtasks[j].ID != "" {
				all = append(all, &t.Subtasks[j])
			}
		}
	}
	for _, t := range all {
		if first := f.byID[t.ID]; first != t {
			const format = "duplicate id %s: the task at %s:%d:%d has it too; ids must be unique"
			switch {
			case !willRun(t) && !willRun(first):
				// Both are finished: task-master keeps working with such files.
				d.warn(t.obj.off, t.ID, format, t.ID, d.name, first.Pos.Line, first.Pos.Col)
			case t.Parent != "" && t.Parent == first.Parent:
				// Siblings: no other task can tell them apart, so only
				// their parent is in doubt.
				d.confine(f, t, t.obj.off, format, t.ID, d.name, first.Pos.Line, first.Pos.Col)
			default:
				d.add(t.obj.off, t.ID, format, t.ID, d.name, first.Pos.Line, first.Pos.Col)
			}
		}
	}

	for _, t := range all {
		deps := t.obj.get("dependencies")
		if deps == nil || deps.kind != kindArray {
			continue
		}
		for _, e := range deps.elems {
			if e.kind != kindString && e.kind != kindNumber {
				continue
			}
			dep := e.str
			if e.kind == kindNumber {
				dep = string(e.raw)
			}
			target := f.resolve(t, dep)
			// confined reports a problem only t's own task is in doubt
			// over: it blocks that task, or is a warning when t will not
			// run anyway.
			confined := func(off int, _ string, format string, args ...any) { d.confine(f, t, off, format, args...) }
			if !willRun(t) {
				confined = d.warn // confined to a task that will not run
			}
			switch {
			case target == "" && d.others[dep] != "" && t.Parent == "":
				why := fmt.Sprintf("dependency %s is a task of tag %q; statgraph runs one tag at a time", dep, d.others[dep])
				d.warn(e.off, t.ID, "%s, so this task is blocked; finish it there or remove the dependency", why)
				if f.holds == nil {
					f.holds = map[string]string{}
				}
				f.holds[t.ID] = why
			case target == "":
				// Only t waits on it: t is blocked, the rest of the tag runs.
				confined(e.off, t.ID, "dependency %s does not exist (known ids: %s)", dep, knownIDs(all))
			case target == t.ID:
				confined(e.off, t.ID, "task %s depends on itself; remove %s from its dependencies", t.ID, dep)
			case target == t.Parent:
				confined(e.off, t.ID, "subtask %s depends on its own parent %s; a parent is done only when its subtasks are, so remove it", t.ID, target)
			case f.byID[target].Parent == t.ID:
				confined(e.off, t.ID, "task %s depends on its own subtask %s; its subtasks already run before it counts as done, so remove it", t.ID, target)
			}
		}
	}

	d.checkCycles(f)
}

// knownIDs lists ids for a message, shortened when there are many.
func knownIDs(all []*Task) string {
	ids := make([]string, 0, min(len(all), maxListedIDs))
	for i, t := range all {
		if i == maxListedIDs {
			ids = append(ids, fmt.Sprintf("… and %d more", len(all)-maxListedIDs))
			break
		}
		ids = append(ids, t.ID)
	}
	return strings.Join(ids, ", ")
}

// checkCycles reports each dependency cycle between units once, starting
// from the unit that comes first in the file.
func (d *decoder) checkCycles(f *File) {
	units := f.Units()
	index := make(map[string]int, len(units))
	for i, u := range units {
		index[u.ID] = i
	}
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(units))
	reported := make([]bool, len(units)) // the unit is in a cycle already reported
	type frame struct{ unit, next int }
	for start := range units {
		if color[start] != white {
			continue
		}
		stack := []frame{{start, 0}}
		color[start] = grey
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			deps := units[top.unit].Deps
			if top.next == len(deps) {
				color[top.unit] = black
				stack = stack[:len(stack)-1]
				continue
			}
			dep := index[deps[top.next]]
			top.next++
			switch color[dep] {
			case white:
				color[dep] = grey
				stack = append(stack, frame{dep, 0})
			case grey:
				k := len(stack) - 1
				for stack[k].unit != dep {
					k--
				}
				cycle := make([]int, 0, len(stack)-k)
				for _, fr := range stack[k:] {
					cycle = append(cycle, fr.unit)
				}
				d.reportCycle(f, units, cycle, reported)
			}
		}
	}
}

// reportCycle reports a cycle given as units each depending on the next
// (the last depends on the first), unless it shares a unit with a cycle
// already reported: one message per tangle, and fixing it reveals the rest.
func (d *decoder) reportCycle(f *File, units []Unit, cycle []int, reported []bool) {
	first := 0
	for i, u := range cycle {
		if reported[u] {
			return
		}
		if u < cycle[first] {
			first = i
		}
	}
	// Rotate so the message starts at the unit that comes first in the file;
	// "a -> b" reads "a depends on b".
	ordered := append(append([]int{}, cycle[first:]...), cycle[:first]...)
	ids := make([]string, len(ordered))
	for i, u := range ordered {
		ids[i] = units[u].ID
		reported[u] = true
	}
	t := units[ordered[0]].Task
	off := t.obj.off
	if deps := t.obj.get("dependencies"); deps != nil {
		off = deps.off
	}
	const format = "dependency cycle: %s -> %s; remove one of these dependencies"
	runs := false                             // a unit of the cycle would run: it stops them
	oneTask := units[ordered[0]].Parent != "" // the cycle is among the subtasks of one task
	for _, u := range ordered {
		runs = runs || willRun(units[u].Task)
		oneTask = oneTask && units[u].Parent == units[ordered[0]].Parent
	}
	switch {
	case !runs: // a cycle among finished tasks stops nothing
		d.warn(off, t.ID, format, strings.Join(ids, " -> "), ids[0])
	case oneTask:
		d.confine(f, t, off, format, strings.Join(ids, " -> "), ids[0])
	default:
		d.add(off, t.ID, format, strings.Join(ids, " -> "), ids[0])
	}
}

// willRun reports whether a run would take the task up: its status is a
// known one that still has work to do.
func willRun(t *Task) bool { return ValidStatus(t.Status) && Runnable(t.Status) }

// confine records a problem confined to one task, found at byte offset
// off of task t (a task, or a subtask whose task is its parent): no other
// task's meaning depends on it, so instead of refusing the file it is a
// warning that blocks the task (File.holds), and with it the tasks that
// depend on it (Next), while the rest of the tag runs. The first such
// problem of a task is its reason.
func (d *decoder) confine(f *File, t *Task, off int, format string, args ...any) {
	owner := cmp.Or(t.Parent, t.ID)
	msg := fmt.Sprintf(format, args...)
	d.warn(off, t.ID, "%s; task %s is blocked until it is fixed, and so are the tasks that depend on it", msg, owner)
	if f.holds == nil {
		f.holds = map[string]string{}
	}
	if _, held := f.holds[owner]; !held {
		p := d.lines.pos(off)
		f.holds[owner] = fmt.Sprintf("%s (%s:%d:%d); fix the file, then statgraph reset %s", msg, d.name, p.Line, p.Col, owner)
	}
}
