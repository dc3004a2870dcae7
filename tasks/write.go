package tasks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/statgraph/statgraph/internal/fsutil"
	"github.com/statgraph/statgraph/internal/secret"
)

// Errors returned by Apply and SetStatus, wrapped with the task id.
var (
	// ErrNoTask means no task or subtask has the given id.
	ErrNoTask = errors.New("no such task")
	// ErrBadStatus means a status is not one of the Status constants.
	ErrBadStatus = errors.New("tasks: unknown status")
)

// Outcome is what statgraph records about a unit after working on it, or
// while it works (its retry count and error history after each
// verification): the fields of a task statgraph owns, applied together by
// Apply.
type Outcome struct {
	Status       string     // one of the Status constants
	Reason       string     // why, for blocked or interrupted units; "" removes status_reason
	RetryCount   int        // attempts made
	ErrorHistory []string   // "Retry k: <errors>" per failed verification
	FailedAt     *time.Time // when the unit failed; nil for none
	ParkedUntil  *time.Time // when a parked unit's limit resets; nil unless parked
}

// Apply records o on the task or subtask id in one step: status,
// status_reason, retry_count, error_history, failed_at and parked_until
// (RFC 3339, UTC).
// When id is a subtask, the parent's status is derived again from its
// subtasks (see SetStatus). The change is in memory until Save. Apply
// returns an error wrapping ErrNoTask or ErrBadStatus and changes nothing
// in that case. It is safe for concurrent use.
func (f *File) Apply(id string, o Outcome) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, err := f.lookupForStatus(id, o.Status)
	if err != nil {
		return err
	}
	f.apply(t, o)
	return nil
}

// apply writes o into task t and marks t changed; f.mu is held.
func (f *File) apply(t *Task, o Outcome) {
	f.markDirty(t.ID)
	f.setStatus(t, o.Status, o.Reason)
	f.setRetryCount(t, o.RetryCount)
	f.setErrorHistory(t, o.ErrorHistory)
	f.setFailedAt(t, o.FailedAt)
	f.setParkedUntil(t, o.ParkedUntil)
}

// SetStatus sets the status of task or subtask id, and its status_reason
// (removed when reason is ""). For a subtask it then derives the parent's
// status: done when every subtask is done or cancelled (cancelled when all
// are cancelled); otherwise in-progress if one is in progress, else failed,
// interrupted or blocked if one is, in that order; in-progress if some are
// done; unchanged otherwise. Errors and concurrency are as for Apply.
func (f *File) SetStatus(id, status, reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, err := f.lookupForStatus(id, status)
	if err != nil {
		return err
	}
	f.markDirty(t.ID)
	f.setStatus(t, status, reason)
	return nil
}

// lookup finds task id; f.mu is held.
func (f *File) lookup(id string) (*Task, error) {
	t, ok := f.byID[id]
	if !ok {
		return nil, fmt.Errorf("%w %q in %s", ErrNoTask, id, f.Path)
	}
	return t, nil
}

// lookupForStatus finds task id and checks that status is a valid, non-empty status.
func (f *File) lookupForStatus(id, status string) (*Task, error) {
	t, err := f.lookup(id)
	if err != nil {
		return nil, err
	}
	if status == "" || !ValidStatus(status) {
		return nil, fmt.Errorf("%w %q for task %s", ErrBadStatus, status, id)
	}
	return t, nil
}

// setStatus writes status and status_reason and derives the parent's
// status; the caller marks t changed.
func (f *File) setStatus(t *Task, status, reason string) {
	reason = secret.Scrub(reason)
	t.Status, t.StatusReason = status, reason
	setField(t.obj, "status", stringNode(status))
	if reason != "" {
		setField(t.obj, "status_reason", stringNode(reason))
	} else {
		t.obj.remove("status_reason")
	}
	if t.Parent != "" {
		parent := f.byID[t.Parent]
		if derived := parentStatus(parent.Subtasks); derived != "" && derived != parent.Status {
			parent.Status = derived
			setField(parent.obj, "status", stringNode(derived))
		}
	}
}

// parentStatus derives a parent's status from its subtasks, or returns ""
// to leave it unchanged.
func parentStatus(subs []Task) string {
	count := make(map[string]int)
	for _, s := range subs {
		st := s.Status
		if st == "" {
			st = StatusPending
		}
		count[st]++
	}
	switch {
	case count[StatusCancelled] == len(subs):
		return StatusCancelled
	case count[StatusDone]+count[StatusCompleted]+count[StatusCancelled] == len(subs):
		return StatusDone
	}
	for _, st := range []string{StatusInProgress, StatusFailed, StatusInterrupted, StatusParked, StatusBlocked} {
		if count[st] > 0 {
			return st
		}
	}
	if count[StatusDone]+count[StatusCompleted] > 0 {
		return StatusInProgress
	}
	return ""
}

// setRetryCount writes retry_count, leaving a missing field missing while it is 0.
func (f *File) setRetryCount(t *Task, n int) {
	t.RetryCount = n
	if n != 0 || t.obj.get("retry_count") != nil {
		setField(t.obj, "retry_count", intNode(n))
	}
}

// setErrorHistory writes error_history, leaving a missing field missing while it is empty.
// Like status_reason (setStatus), every entry is scrubbed of secrets.
func (f *File) setErrorHistory(t *Task, h []string) {
	h = slices.Clone(h)
	for i := range h {
		h[i] = secret.Scrub(h[i])
	}
	t.ErrorHistory = h
	if len(h) != 0 || t.obj.get("error_history") != nil {
		setField(t.obj, "error_history", stringsNode(h))
	}
}

// setFailedAt writes failed_at in UTC, or null when at is nil and the field exists.
func (f *File) setFailedAt(t *Task, at *time.Time) {
	switch {
	case at != nil:
		utc := at.UTC()
		t.FailedAt = &utc
		setField(t.obj, "failed_at", stringNode(utc.Format(time.RFC3339)))
	case t.obj.get("failed_at") != nil:
		t.FailedAt = nil
		setField(t.obj, "failed_at", nullNode())
	default:
		t.FailedAt = nil
	}
}

// setParkedUntil writes parked_until in UTC, or removes it when at is nil.
func (f *File) setParkedUntil(t *Task, at *time.Time) {
	if at == nil {
		t.ParkedUntil = nil
		t.obj.remove("parked_until")
		return
	}
	utc := at.UTC()
	t.ParkedUntil = &utc
	setField(t.obj, "parked_until", stringNode(utc.Format(time.RFC3339Nano)))
}

// setField sets key in a task object; a new key goes before "subtasks" so
// a task's own fields stay together above its subtasks.
func setField(obj *node, key string, val *node) {
	if obj.get(key) != nil {
		obj.set(key, val)
		return
	}
	for i, m := range obj.members {
		if m.key == "subtasks" {
			obj.members = append(obj.members[:i], append([]member{{key: key, keyRaw: marshalString(key), keyOff: -1, val: val}}, obj.members[i:]...)...)
			return
		}
	}
	obj.set(key, val)
}

// stringNode, intNode, nullNode and stringsNode build values for write-back;
// their offset is -1 because they do not come from the source.
func stringNode(s string) *node {
	return &node{kind: kindString, raw: marshalString(s), str: s, off: -1}
}

func intNode(v int) *node {
	return &node{kind: kindNumber, raw: strconv.AppendInt(nil, int64(v), 10), off: -1}
}

func nullNode() *node {
	return &node{kind: kindNull, raw: []byte("null"), off: -1}
}

func stringsNode(ss []string) *node {
	arr := &node{kind: kindArray, off: -1, elems: make([]*node, len(ss))}
	for i, s := range ss {
		arr.elems[i] = stringNode(s)
	}
	return arr
}

// marshalString encodes s as a JSON string without HTML escaping, so that
// "a < b" stays readable in the file.
func marshalString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // encoding a string cannot fail
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// Save writes the file back to Path atomically: the new content goes to a
// temporary file in the same directory, which is synced and renamed over
// the old one, and then the directory is synced, so a reader sees the old
// file or the new one and a crash leaves one of them. Every field statgraph
// does not own is written as it was read, members in their original order;
// the layout is one member per line with the file's own indentation. A BOM
// and a final newline are kept.
//
// The user may edit the file while statgraph works on it: Save first reads
// it again, and when it changed since it was last read or written, takes
// that version (its added, removed and edited tasks) and applies to it only
// the fields statgraph owns, for the tasks statgraph changed since the last
// Save; Raw, Tasks and the other exported fields then describe that version
// and Generation goes up. When the changed file is not valid (the user is
// in the middle of an edit), Save writes nothing, keeps its changes for the
// next Save and leaves a note (see TakeNotes); it never writes over bytes
// of the user's it has not read. A task removed or edited while it is in
// progress leaves a note too. Save returns an error only when the file
// cannot be read or written.
//
// Save holds the File's lock while it works, so it is safe for concurrent
// use with the setters; it does not take the lock file (see Lock), which
// the caller holds so that no other statgraph writes the file meanwhile.
func (f *File) Save() error {
	_, err := f.TrySave()
	return err
}

// TrySave is Save, reporting whether it wrote every change statgraph made
// (false when it wrote nothing, leaving a note).
func (f *File) TrySave() (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var buf bytes.Buffer
	for try := 0; ; try++ {
		if ok, err := f.adoptDisk(); !ok || err != nil {
			return false, err
		}
		buf.Reset()
		buf.Grow(len(f.Raw) + 256)
		if f.bom {
			buf.Write(utf8BOM)
		}
		render(&buf, f.root, f.indent, 0)
		if f.eol {
			buf.WriteByte('\n')
		}
		// The user may have saved again while this one was made: then
		// take that version in too. The file is read again after the new
		// one is written beside it, just before the rename, leaving only
		// the rename as a window, since an editor does not take
		// statgraph's lock.
		wrote, err := writeAtomicIf(f.Path, buf.Bytes(), f.unchangedOnDisk)
		if err != nil {
			return false, fmt.Errorf("save tasks file: %w", err)
		}
		if wrote {
			break
		}
		if try == 2 {
			f.note("%s keeps changing; statgraph writes its results at the next save", f.Path)
			return false, nil
		}
	}
	f.disk, f.dirty = buf.Bytes(), nil
	return true, nil
}

// unchangedOnDisk reports whether the file at f.Path still holds the bytes
// last read or written (or is gone).
func (f *File) unchangedOnDisk() (bool, error) {
	now, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	return err == nil && bytes.Equal(now, f.disk), err
}

// writeAtomicIf replaces path with data when unchanged says it still
// holds what was read (fsutil.WriteFileIf: a reader sees the old or the
// new file, and the new one is durable once it returns). A symlink at path
// is followed, so its target is replaced rather than the link. A new file
// gets mode 0644.
func writeAtomicIf(path string, data []byte, unchanged func() (bool, error)) (bool, error) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	return fsutil.WriteFileIf(path, data, 0o644, unchanged)
}
