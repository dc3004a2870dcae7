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
)

// journal.go makes a unit's outcome durable without rewriting the whole
// tasks file: the dispatch loop appends each outcome to a small journal in
// the plan's state directory (one JSON line, fsynced) as it learns of it,
// and writes tasks.json only now and then (see saver). Once a save has
// written everything the journal holds, the journal is emptied. A run that
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
}

// journal is the outcome journal of one plan. It is used by the dispatch
// loop's goroutine only.
type journal struct {
	path string
	f    *os.File     // open for appending; nil until the first add
	buf  bytes.Buffer // entries added since the last flush
	n    int          // entries in the file since it was last emptied
}

// journalPath is where the plan's journal lives.
func journalPath(stateDir string) string { return filepath.Join(stateDir, "results.journal") }

// replayJournal applies the outcomes a killed run left in the journal at
// path to f (in memory) and returns how many it applied. An outcome is
// applied only to a unit whose status in the file is still runnable (the
// run that recorded it had the unit in progress), so a status the user
// changed since wins. A torn last line (the kill hit the append) is
// ignored: its unit had not been reported finished. A missing journal is
// an empty one.
func replayJournal(path string, f *File) (int, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the results journal %s: %w", path, err)
	}
	applied := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for sc.Scan() {
		var e journalEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		t, ok := f.Task(e.ID)
		if !ok || !Runnable(t.Status) || len(t.Subtasks) > 0 {
			continue
		}
		if f.SetResult(e.ID, Result{Status: e.Status, Reason: e.Reason, RetryCount: e.RetryCount, ErrorHistory: e.ErrorHistory, FailedAt: e.FailedAt}) == nil {
			applied++
		}
	}
	return applied, nil
}

// add queues unit id's outcome r; flush makes it durable.
func (j *journal) add(id string, r UnitResult, res Result) {
	line, _ := json.Marshal(journalEntry{ID: id, Status: r.Status, Reason: r.Reason, RetryCount: res.RetryCount, ErrorHistory: res.ErrorHistory, FailedAt: res.FailedAt})
	j.buf.Write(line)
	j.buf.WriteByte('\n')
}

// flush appends the queued outcomes to the journal and fsyncs it.
func (j *journal) flush() error {
	if j.buf.Len() == 0 {
		return nil
	}
	if j.f == nil {
		f, err := os.OpenFile(j.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("results journal: %w", err)
		}
		j.f = f
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

// clear empties the journal after a save wrote everything it holds. It is
// not fsynced: a journal that comes back after a crash only repeats what
// the file already says.
func (j *journal) clear() error {
	if j.n == 0 {
		return nil
	}
	j.n = 0
	if j.f == nil {
		return os.Truncate(j.path, 0)
	}
	return j.f.Truncate(0)
}

// close closes the journal file.
func (j *journal) close() {
	if j.f != nil {
		j.f.Close()
		j.f = nil
	}
}
