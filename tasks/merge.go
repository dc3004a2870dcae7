package tasks

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/statgraph/statgraph/internal/printable"
)

// merge.go lets the user edit tasks.json while a run works on it. Save does
// not render the tree loaded at start over the user's edits: it reads the
// file again, and when it changed since statgraph last read or wrote it,
// takes the user's version and applies to it only the fields statgraph owns
// (status, status_reason, retry_count, error_history, failed_at,
// parked_until), and only
// for the tasks statgraph changed since its last save.

// ownedKeys are the task fields statgraph writes back; every other field
// belongs to the user.
var ownedKeys = []string{"status", "status_reason", "retry_count", "error_history", "failed_at", "parked_until"}

// Generation counts the times Save took a version of the file that someone
// else wrote (see Save); a caller that keeps the units compares it before
// and after a Save to know when to call Units again. It is safe for
// concurrent use.
func (f *File) Generation() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gen
}

// TakeNotes returns, and forgets, what Save has to tell a person about the
// user's edits it met: a task that was removed or changed while statgraph
// worked on it, or a file that could not be read (being edited) and was
// left as it was. Each note is one line, control characters escaped. It is
// safe for concurrent use.
func (f *File) TakeNotes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.notes
	f.notes = nil
	return n
}

// note records a line for TakeNotes; f.mu is held.
func (f *File) note(format string, args ...any) {
	f.notes = append(f.notes, printable.String(fmt.Sprintf(format, args...)))
}

// markDirty records that statgraph changed owned fields of task id; f.mu is held.
func (f *File) markDirty(id string) {
	if f.dirty == nil {
		f.dirty = make(map[string]bool)
	}
	f.dirty[id] = true
}

// adoptDisk re-reads the file and, when someone else changed it since it
// was last read or written, replaces the in-memory document with that
// version plus statgraph's own changes. It returns false when the file
// cannot be used now (it does not parse or is not valid: the user is in the
// middle of an edit); then nothing must be written, and a note says so.
// f.mu is held.
func (f *File) adoptDisk() (bool, error) {
	data, err := os.ReadFile(f.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true, nil // nothing of the user's to keep; Save writes ours
	case err != nil:
		return false, fmt.Errorf("save tasks file: read it again first: %w", err)
	case bytes.Equal(data, f.disk):
		return true, nil
	}
	g, err := Parse(f.Path, data, f.tagArg)
	if err != nil {
		first := err.Error()
		var ve *ValidationError
		if errors.As(err, &ve) && len(ve.Problems) > 0 {
			first = ve.Problems[0].String()
		}
		f.note("%s changed during the run but cannot be read (%s); it is left as you wrote it, and statgraph writes its results at the next save once the file is valid", f.Path, first)
		return false, nil
	}
	for id, t := range f.byID {
		// A unit statgraph works on: running, or changed since the last save.
		if t.Status != StatusInProgress && !f.dirty[id] || len(t.Subtasks) > 0 {
			continue
		}
		switch u, ok := g.byID[id]; {
		case !ok:
			f.note("task %s was removed from %s while statgraph worked on it; your version is kept, and its result will not be written back (the run store keeps it)", id, f.Path)
		case !sameUserFields(t.obj, u.obj):
			f.note("task %s was edited in %s while statgraph worked on it; your version is kept, and this run goes on with the version it started with", id, f.Path)
		}
	}
	for id := range f.dirty {
		t, ok := f.byID[id]
		u, found := g.byID[id]
		if !ok || !found {
			continue
		}
		if t.Status != "" {
			g.setStatus(u, t.Status, t.StatusReason)
		}
		g.setRetryCount(u, t.RetryCount)
		g.setErrorHistory(u, t.ErrorHistory)
		g.setFailedAt(u, t.FailedAt)
		g.setParkedUntil(u, t.ParkedUntil)
	}
	f.Raw, f.Tagged, f.Tag, f.Defaults, f.Tasks = g.Raw, g.Tagged, g.Tag, g.Defaults, g.Tasks
	f.root, f.bom, f.indent, f.eol, f.byID = g.root, g.bom, g.indent, g.eol, g.byID
	f.Warnings, f.holds = g.Warnings, g.holds
	f.disk = data
	f.gen++
	return true, nil
}

// sameUserFields reports whether two task objects agree on every field the
// user owns (all but ownedKeys), subtasks included.
func sameUserFields(a, b *node) bool {
	var x, y bytes.Buffer
	render(&x, withoutOwned(a), "", 0)
	render(&y, withoutOwned(b), "", 0)
	return bytes.Equal(x.Bytes(), y.Bytes())
}

// withoutOwned returns a copy of a task object without the owned fields, in
// it and in its subtasks.
func withoutOwned(obj *node) *node {
	c := *obj
	c.members = nil
	for _, m := range obj.members {
		if contains(ownedKeys, m.key) {
			continue
		}
		if m.key == "subtasks" && m.val.kind == kindArray {
			subs := &node{kind: kindArray, elems: make([]*node, len(m.val.elems))}
			for i, e := range m.val.elems {
				subs.elems[i] = e
				if e.kind == kindObject {
					subs.elems[i] = withoutOwned(e)
				}
			}
			m.val = subs
		}
		c.members = append(c.members, m)
	}
	return &c
}
