package tasks

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"
)

// utf8BOM is the byte order mark some editors put at the start of a file.
var utf8BOM = []byte("\xEF\xBB\xBF")

// Load reads and validates the tasks file at path. tag chooses the
// claude-task-master tag in a tagged file; "" means DefaultTag. Load only
// reads: whatever the outcome, the file is not changed.
//
// Load returns a *ValidationError listing every problem found when the file
// is not valid, and the *os.PathError from reading otherwise.
func Load(path string, tag string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read tasks file: %w", err)
	}
	return Parse(path, data, tag)
}

// Parse validates data as a tasks file named name (the name appears in
// problem positions, and Save writes to it). The File keeps using data, so
// the caller must not modify data afterwards. See Load.
func Parse(name string, data []byte, tag string) (*File, error) {
	f := &File{Path: name, Raw: data, disk: data, tagArg: tag}
	body := data
	if bytes.HasPrefix(body, utf8BOM) {
		f.bom = true
		body = body[len(utf8BOM):]
	}
	d := &decoder{name: name, lines: newLineIndex(body)}
	root, serr := parseTree(body)
	if serr != nil {
		// Name the task the error is in when its id came before the error
		// (a subtask's as "<task>.<sub>").
		d.add(serr.off, strings.Join(serr.ids, "."), "invalid JSON: %s", serr.msg)
		return nil, d.err()
	}
	f.root = root
	f.indent = detectIndent(body)
	f.eol = bytes.HasSuffix(body, []byte("\n"))

	list := d.selectTasks(f, root, tag)
	if list != nil {
		f.Tasks = d.taskList(list, nil, f.Defaults)
	}
	f.index()
	d.checkGraph(f)
	if len(d.problems) > 0 {
		return nil, d.err()
	}
	sortProblems(d.warnings)
	f.Warnings = d.warnings
	return f, nil
}

// selectTasks finds the tasks array for the plain or tagged form, decodes
// the defaults that apply, and reports a missing or wrong shape.
func (d *decoder) selectTasks(f *File, root *node, tag string) *node {
	if root.kind != kindObject {
		d.add(root.off, "", `the top level is %s %s; want an object {"tasks": [...]}`, article(root.kind), root.kind)
		return nil
	}
	d.uniqueKeys(root, "")
	holder := root
	if root.get("tasks") == nil {
		if tag == "" {
			tag = DefaultTag
		}
		tagged := root.get(tag)
		if tagged == nil || tagged.kind != kindObject || tagged.get("tasks") == nil {
			var tags []string
			for _, m := range root.members {
				if m.val.kind == kindObject && m.val.get("tasks") != nil {
					tags = append(tags, m.key)
				}
			}
			if len(tags) == 0 {
				d.add(root.off, "", `no "tasks" array: want {"tasks": [...]} or the tagged form {"<tag>": {"tasks": [...]}}`)
			} else {
				d.add(root.off, "", "tag %q not found (tags present: %s); choose one with --tag", tag, strings.Join(tags, ", "))
			}
			return nil
		}
		f.Tagged, f.Tag, holder = true, tag, tagged
		d.uniqueKeys(tagged, "")
		d.others = otherTagIDs(root, tag)
	} else if tag != "" && tag != DefaultTag {
		d.add(root.off, "", "tag %q was asked for but the file has the plain form {\"tasks\": [...]} with no tags; leave out --tag", tag)
		return nil
	}

	if def := root.get("defaults"); def != nil {
		f.Defaults = d.defaults(def, Defaults{})
	}
	if holder != root {
		if def := holder.get("defaults"); def != nil {
			f.Defaults = d.defaults(def, f.Defaults)
		}
	}
	list := holder.get("tasks")
	if list.kind != kindArray {
		d.add(list.off, "", `"tasks" is %s %s; want an array of task objects`, article(list.kind), list.kind)
		return nil
	}
	return list
}

// index fills byID with every task that has an id; for a duplicate id the
// first task in the file wins.
func (f *File) index() {
	f.byID = make(map[string]*Task)
	add := func(t *Task) {
		if _, dup := f.byID[t.ID]; !dup && t.ID != "" {
			f.byID[t.ID] = t
		}
	}
	for i := range f.Tasks {
		add(&f.Tasks[i])
		for j := range f.Tasks[i].Subtasks {
			add(&f.Tasks[i].Subtasks[j])
		}
	}
}

// decoder turns the tree into tasks and collects problems.
type decoder struct {
	name     string
	lines    *lineIndex
	problems []Problem
	warnings []Problem
	others   map[string]string // task id -> the other tag holding it, for a tagged file
}

// add records a problem at byte offset off.
func (d *decoder) add(off int, taskID, format string, args ...any) {
	d.problems = append(d.problems, d.problem(off, taskID, format, args...))
}

// warn records a warning at byte offset off.
func (d *decoder) warn(off int, taskID, format string, args ...any) {
	d.warnings = append(d.warnings, d.problem(off, taskID, format, args...))
}

func (d *decoder) problem(off int, taskID, format string, args ...any) Problem {
	p := d.lines.pos(off)
	return Problem{
		File: d.name, Line: p.Line, Col: p.Col, TaskID: taskID,
		Message: fmt.Sprintf(format, args...),
	}
}

// err returns the collected problems sorted by position.
func (d *decoder) err() *ValidationError {
	sortProblems(d.problems)
	sortProblems(d.warnings)
	return &ValidationError{Problems: d.problems, Warnings: d.warnings}
}

// sortProblems sorts problems by position.
func sortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}

// article returns "a" or "an" for a kind's name.
func article(k kind) string {
	if k == kindArray || k == kindObject {
		return "an"
	}
	return "a"
}

// otherTagIDs maps the top-level task ids of every tag but tag to the first
// tag holding each, so a dependency on one can be told from a typo.
func otherTagIDs(root *node, tag string) map[string]string {
	out := map[string]string{}
	for _, m := range root.members {
		list := m.val.get("tasks")
		if m.key == tag || list == nil || list.kind != kindArray {
			continue
		}
		for _, el := range list.elems {
			id := el.get("id")
			if id == nil {
				continue
			}
			key := id.str
			if id.kind == kindNumber {
				key = string(id.raw)
			}
			if _, seen := out[key]; !seen && key != "" {
				out[key] = m.key
			}
		}
	}
	return out
}
