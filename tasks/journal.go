package tasks

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/statgraph/statgraph/internal/fsutil"
)

// journal.go makes a unit's outcome durable without rewriting the whole
// tasks file: the dispatch loop appends each outcome to a small journal in
// the plan's state directory (one JSON line, fsynced) as it learns of it,
// and writes tasks.json only now and then. Once a save has written
// everything the journal holds, the journal is emptied. A run that
// was killed in between finds the outcomes in the journal and applies them
// to the file before it does anything else, so no status is lost to a kill.

// journalEntry is one line of the journal: a unit's outcome.
type journalEntry struct {
	ID           string     `json:"id"`
	Status       string     `json:"status"`
	Reason       string     `json:"reason,omitempty"`
	RetryCount   int        `json:"retry_count,omitempty"`
	ErrorHistory []string   `json:"error_history,omitempty"`
	FailedAt     *time.Time `json:"failed_at,omitempty"`
	ParkedUntil  *time.Time `json:"parked_until,omitempty"`
}

// Journal is the results journal at one path, as the dispatch loop keeps
// it: Add queues an outcome, Flush makes the queued ones durable, Clear
// empties the journal once a save wrote everything it holds. A Journal is
// used by one goroutine only.
type Journal struct {
	path string
	f    *os.File     // open for appending; nil until the first Flush with entries
	buf  bytes.Buffer // entries added since the last flush
	n    int          // entries in the file since it was last emptied
}

// OpenJournal starts a run's journal at path (a file in the plan's state
// directory): it applies to f the outcomes a killed run left there, as
// SettleJournal does, saving f when that changed it, and empties the
// journal. held is true when f could not be saved now (the user's edit in
// progress does not parse): the journal then keeps its outcomes until a
// later save writes them and Clear is called. It fails when the journal
// cannot be read or emptied or f cannot be written.
func OpenJournal(f *File, path string) (j *Journal, held bool, err error) {
	applied, entries, err := replayJournal(path, f)
	if err != nil {
		return nil, false, err
	}
	j = &Journal{path: path, n: entries}
	if applied > 0 {
		wrote, err := f.TrySave()
		if err != nil {
			return nil, false, err
		}
		held = !wrote
	}
	if !held {
		if err := j.Clear(); err != nil {
			return nil, false, err
		}
	}
	return j, held, nil
}

// ApplyJournal applies to f, in memory only, the outcomes that a run made
// durable in its results journal at path but not yet in the tasks file (a
// run that is going on, or one that was killed), and returns how many it
// applied. It writes nothing and needs no lock, so a reader such as
// statgraph status shows what the next run would start from. The rules
// are those of the dispatcher's replay: an outcome applies only to a unit
// still runnable in f, and a torn last line is ignored. It fails only when
// the journal exists and cannot be read.
func ApplyJournal(f *File, path string) (int, error) {
	applied, _, err := replayJournal(path, f)
	return applied, err
}

// SettleJournal brings the results journal at path into f and empties it:
// it applies the journal's outcomes, saves f when that changed it, and then
// truncates the journal and fsyncs the truncation. Every command that
// changes statuses in the tasks file outside a run (statgraph reset, run
// --retry-failed) calls it first, holding the file's Lock, so that an
// outcome only in the journal is seen by the change, and an old outcome
// can never be applied again over it (a reset task would otherwise come
// back failed from the journal). When f cannot be saved now (the user's
// edit in progress does not parse), the journal is kept and the error says
// so; nothing is lost. Not safe for concurrent use with other writers of
// f.
func SettleJournal(f *File, path string) error {
	applied, entries, err := replayJournal(path, f)
	if err != nil || entries == 0 {
		return err
	}
	if applied > 0 {
		wrote, err := f.TrySave()
		if err != nil {
			return err
		}
		if !wrote {
			return fmt.Errorf("tasks: %s cannot be saved while it does not parse (an edit in progress?); the outcomes of the last run are kept in %s: finish the edit and try again", f.Path, path)
		}
	}
	return truncateDurably(path, nil)
}

// replayJournal applies the outcomes a killed run left in the journal at
// path to f (in memory) and returns how many it applied and how many
// entries the journal holds. An outcome is applied only to a unit whose
// status in the file is still runnable (the run that recorded it had the
// unit in progress), so a status the user changed since wins. A torn last
// line (the kill hit the append) is ignored: its unit had not been
// reported finished. A missing journal is an empty one.
func replayJournal(path string, f *File) (applied, entries int, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("read the results journal %s: %w", path, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for sc.Scan() {
		entries++
		var e journalEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		t, ok := f.Task(e.ID)
		if !ok || !Runnable(t.Status) || len(t.Subtasks) > 0 {
			continue
		}
		if f.Apply(e.ID, Outcome{Status: e.Status, Reason: e.Reason, RetryCount: e.RetryCount, ErrorHistory: e.ErrorHistory, FailedAt: e.FailedAt, ParkedUntil: e.ParkedUntil}) == nil {
			applied++
		}
	}
	return applied, entries, nil
}

// Add queues unit id's outcome o; Flush makes it durable.
func (j *Journal) Add(id string, o Outcome) {
	line, _ := json.Marshal(journalEntry{ID: id, Status: o.Status, Reason: o.Reason, RetryCount: o.RetryCount, ErrorHistory: o.ErrorHistory, FailedAt: o.FailedAt, ParkedUntil: o.ParkedUntil})
	j.buf.Write(line)
	j.buf.WriteByte('\n')
}

// Flush appends the queued outcomes to the journal and fsyncs it.
func (j *Journal) Flush() error {
	if j.buf.Len() == 0 {
		return nil
	}
	if j.f == nil {
		f, err := os.OpenFile(j.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("results journal: %w", err)
		}
		j.f = f
		// The journal's name must survive a power loss as well as its
		// lines: fsync the directory that holds it, once per run.
		if err := fsutil.SyncDir(filepath.Dir(j.path)); err != nil {
			return fmt.Errorf("results journal %s: %w", j.path, err)
		}
	}
	if _, err := j.f.Write(j.buf.Bytes()); err != nil {
		return fmt.Errorf("results journal %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("results journal %s: %w", j.path, err)
	}
	j.n += bytes.Count(j.buf.Bytes(), []byte{'\n'})
	j.buf.Reset()
	return nil
}

// Clear empties the journal after a save wrote everything it holds, and
// fsyncs the truncation: an emptied journal must stay empty after a power
// loss, since an old outcome replayed over a unit reset since would undo
// the reset.
func (j *Journal) Clear() error {
	if j.n == 0 {
		return nil
	}
	if err := truncateDurably(j.path, j.f); err != nil {
		return err
	}
	j.n = 0
	return nil
}

// truncateDurably empties the journal at path (through f when it is open)
// and fsyncs it. A missing journal is left missing.
func truncateDurably(path string, f *os.File) error {
	if f == nil {
		g, err := os.OpenFile(path, os.O_WRONLY, 0)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("empty the results journal %s: %w", path, err)
		}
		defer g.Close()
		f = g
	}
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("empty the results journal %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("empty the results journal %s: %w", path, err)
	}
	return nil
}

// Close closes the journal file.
func (j *Journal) Close() {
	if j.f != nil {
		j.f.Close()
		j.f = nil
	}
}
