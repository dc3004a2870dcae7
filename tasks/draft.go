package tasks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/statgraph/statgraph/internal/fsutil"
)

// draft.go writes task lists that did not come from the file: a new tag
// of tasks written from a requirements document (statgraph plan) and new
// subtasks of one task (statgraph expand). Both are validated as Load
// validates a file, refusing also what would only be a warning (a new
// task must not start blocked), and written atomically; nothing is
// written on error.

// Draft is a task to write, in the fields and order task-master writes
// (parse-prd, expand): id, title, description, status, dependencies,
// priority, details, testStrategy and, for a task, subtasks.
type Draft struct {
	ID           int
	Title        string
	Description  string
	Priority     string // "" for a subtask
	Details      string
	TestStrategy string
	Dependencies []int
}

// ErrTagExists is returned (wrapped) by AddTag when the file has the tag
// already.
var ErrTagExists = errors.New("the tag exists already")

// draftJSON is a Draft as task-master writes it.
type draftJSON struct {
	ID           int          `json:"id"`
	Title        string       `json:"title"`
	Description  string       `json:"description"`
	Status       string       `json:"status"`
	Dependencies []int        `json:"dependencies"`
	Priority     string       `json:"priority,omitempty"`
	Details      string       `json:"details"`
	TestStrategy string       `json:"testStrategy"`
	Subtasks     *[]draftJSON `json:"subtasks,omitempty"`
}

func (d Draft) json(task bool) draftJSON {
	out := draftJSON{ID: d.ID, Title: d.Title, Description: d.Description, Status: StatusPending,
		Dependencies: d.Dependencies, Priority: d.Priority, Details: d.Details, TestStrategy: d.TestStrategy}
	if out.Dependencies == nil {
		out.Dependencies = []int{}
	}
	if task {
		out.Subtasks = &[]draftJSON{}
	}
	return out
}

// tagJSON is a tag as task-master writes it: its tasks and its metadata.
type tagJSON struct {
	Tasks    []draftJSON `json:"tasks"`
	Metadata struct {
		Created     string `json:"created"`
		Updated     string `json:"updated"`
		Description string `json:"description"`
	} `json:"metadata"`
}

// AddTag writes drafts as the new tag tag (DefaultTag when "") of the
// tasks file at path, with task-master's metadata (created and updated
// at now, and description): into a new file in the tagged form when there
// is none, else as a new member at the end of the file's top-level object,
// every other byte of the file kept as it was. It refuses, writing
// nothing: a file in the plain form {"tasks": [...]} (it has no tags to
// add to), a tag the file has already (an error wrapping ErrTagExists),
// and drafts that are not a valid tag: any problem or warning Load would
// report for it (a *ValidationError naming the tasks), such as an unknown
// dependency, a cycle or a duplicate id. The caller holds the file's Lock.
func AddTag(path, tag, description string, drafts []Draft, now time.Time) (*File, error) {
	if tag == "" {
		tag = DefaultTag
	}
	var t tagJSON
	for _, d := range drafts {
		t.Tasks = append(t.Tasks, d.json(true))
	}
	stamp := now.UTC().Format("2006-01-02T15:04:05.000Z")
	t.Metadata.Created, t.Metadata.Updated, t.Metadata.Description = stamp, stamp, description

	old, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		body, err := json.MarshalIndent(map[string]tagJSON{tag: t}, "", "  ")
		if err != nil {
			return nil, err
		}
		data := append(body, '\n')
		f, err := checkDraft(path, data, tag, "")
		if err != nil {
			return nil, err
		}
		if err := fsutil.WriteNew(path, data, 0o644); err != nil {
			return nil, fmt.Errorf("tasks: write %s: %w", path, err)
		}
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read tasks file: %w", err)
	}
	data, err := spliceTag(path, old, tag, t)
	if err != nil {
		return nil, err
	}
	f, err := checkDraft(path, data, tag, "")
	if err != nil {
		return nil, err
	}
	wrote, err := writeAtomicIf(path, data, func() (bool, error) {
		now, err := os.ReadFile(path)
		return err == nil && bytes.Equal(now, old), err
	})
	if err != nil {
		return nil, fmt.Errorf("tasks: add tag %q to %s: %w", tag, path, err)
	}
	if !wrote {
		return nil, fmt.Errorf("tasks: add tag %q to %s: the file changed meanwhile; nothing was written, run the command again", tag, path)
	}
	return f, nil
}

// spliceTag returns data with the member tag: t added at the end of its
// top-level object, the bytes before and after it unchanged.
func spliceTag(path string, data []byte, tag string, t tagJSON) ([]byte, error) {
	body := bytes.TrimPrefix(data, utf8BOM)
	root, serr := parseTree(body)
	if serr != nil {
		return nil, fmt.Errorf("%s is not valid JSON (%s at byte %d); fix it before adding a tag to it", path, serr.msg, serr.off)
	}
	switch {
	case root.kind != kindObject:
		return nil, fmt.Errorf("%s: the top level is %s %s, not a tasks file; give another file", path, article(root.kind), root.kind)
	case root.get("tasks") != nil:
		return nil, fmt.Errorf(`%s has the plain form {"tasks": [...]}, which has no tags to add to; write the plan into another file (--file), or move its tasks into a tag (task-master does so with {"master": {"tasks": [...]}}) first`, path)
	case root.get(tag) != nil:
		var tags []string
		for _, m := range root.members {
			if m.val.get("tasks") != nil {
				tags = append(tags, m.key)
			}
		}
		return nil, fmt.Errorf("%w: %s has a tag %q (tags: %s); choose a new name with --tag, your tasks are never overwritten", ErrTagExists, path, tag, strings.Join(tags, ", "))
	}
	indent := detectIndent(body)
	val, err := json.MarshalIndent(t, indent, indent)
	if err != nil {
		return nil, err
	}
	member := append(append(marshalString(tag), ": "...), val...)
	end := bytes.LastIndexByte(body, '}') // the top level's closing brace: nothing but space follows it
	last := len(bytes.TrimRight(body[:end], " \t\r\n"))
	var out bytes.Buffer
	out.Write(data[:len(data)-len(body)]) // the BOM, if any
	out.Write(body[:last])
	if len(root.members) > 0 {
		out.WriteByte(',')
	}
	out.WriteString("\n" + indent)
	out.Write(member)
	if len(root.members) == 0 {
		out.WriteByte('\n')
	}
	out.Write(body[last:])
	return out.Bytes(), nil
}

// checkDraft parses data, the file about to be written, with tag, and
// refuses any problem, or any warning about task id (every task of the
// tag when id is "") or its subtasks: a new task must not start blocked.
func checkDraft(path string, data []byte, tag, id string) (*File, error) {
	f, err := Parse(path, data, tag)
	if err != nil {
		return nil, err
	}
	own := f.Warnings
	if id != "" {
		own = ownWarnings(f.Warnings, id)
	}
	if len(own) > 0 {
		return nil, &ValidationError{Problems: own}
	}
	return f, nil
}

// AddSubtasks appends drafts to the subtasks of task id (a top-level task
// whose status is pending) of the file at path and tag, and returns the
// file as written. The drafts' dependencies name sibling subtasks by
// their local ids. It refuses, writing nothing, an unknown or non-pending
// task, a subtask, and a file that would have any problem, or any warning
// about the task (a *ValidationError). The file is written atomically, as
// AddTask writes it. The caller holds the file's Lock.
func AddSubtasks(path, tag, id string, drafts []Draft) (*File, error) {
	f, err := Load(path, tag)
	if err != nil {
		return nil, err
	}
	if err := f.CanExpand(id); err != nil {
		return nil, err
	}
	t := f.byID[id]
	subs := t.obj.get("subtasks")
	if subs == nil || subs.kind != kindArray {
		subs = &node{kind: kindArray}
		t.obj.set("subtasks", subs)
	}
	for _, d := range drafts {
		raw, err := json.Marshal(d.json(false))
		if err != nil {
			return nil, err
		}
		n, serr := parseTree(raw)
		if serr != nil {
			return nil, fmt.Errorf("tasks: subtask %d: %s", d.ID, serr.msg)
		}
		subs.elems = append(subs.elems, n)
	}
	var buf bytes.Buffer
	if f.bom {
		buf.Write(utf8BOM)
	}
	render(&buf, f.root, f.indent, 0)
	if f.eol {
		buf.WriteByte('\n')
	}
	nf, err := checkDraft(path, buf.Bytes(), tag, id)
	if err != nil {
		return nil, err
	}
	wrote, err := writeAtomicIf(path, buf.Bytes(), f.unchangedOnDisk)
	if err != nil {
		return nil, fmt.Errorf("tasks: add subtasks to task %s in %s: %w", id, path, err)
	}
	if !wrote {
		return nil, fmt.Errorf("tasks: add subtasks to task %s in %s: the file changed meanwhile; nothing was written, run the command again", id, path)
	}
	return nf, nil
}

// CanExpand reports why subtasks cannot be added to task id, or nil:
// the task must exist, be a top-level task, and be pending.
func (f *File) CanExpand(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.byID[id]
	switch {
	case !ok:
		return fmt.Errorf("%w: %s (known: %s)", ErrNoTask, id, knownIDs(f.allTasks()))
	case t.Parent != "":
		return fmt.Errorf("task %s is a subtask; only one level of subtasks is supported, so expand its task %s instead", id, t.Parent)
	case t.Status != "" && t.Status != StatusPending:
		return fmt.Errorf("task %s is %s; only a pending task can be expanded (statgraph reset %s sends a failed or blocked one back)", id, t.Status, id)
	}
	return nil
}

// CanAddTag reports why AddTag would refuse to add tag to the file at
// path before any task is drafted (a plain-form file, an existing tag,
// a file that is not JSON), or nil; a missing file is fine.
func CanAddTag(path, tag string) error {
	if tag == "" {
		tag = DefaultTag
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read tasks file: %w", err)
	}
	_, err = spliceTag(path, data, tag, tagJSON{})
	return err
}

// NextSubtaskID is one more than the largest integer local id among the
// subtasks of t.
func NextSubtaskID(t Task) int {
	max := 0
	for _, s := range t.Subtasks {
		local := strings.TrimPrefix(s.LocalID, t.ID+".")
		if n, err := strconv.Atoi(local); err == nil && n > max {
			max = n
		}
	}
	return max + 1
}

// allTasks lists every task and subtask with an id, in file order.
func (f *File) allTasks() []*Task {
	var all []*Task
	for i := range f.Tasks {
		if f.Tasks[i].ID != "" {
			all = append(all, &f.Tasks[i])
		}
		for j := range f.Tasks[i].Subtasks {
			all = append(all, &f.Tasks[i].Subtasks[j])
		}
	}
	return slices.Clip(all)
}
