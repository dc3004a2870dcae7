package control

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/tasks"
)

// racyWindow is how long after a file's modification time a write may
// still leave the time unchanged: file systems keep it in ticks (ext4's
// jiffies, 1 s, FAT's 2 s). Content read sooner after that time than this
// may be rewritten, at the same size, without the stat changing.
const racyWindow = 2 * time.Second

// hashSeed seeds the content hashes of the files a poll compares.
var hashSeed = maphash.MakeSeed()

// stamp is what a poll knows of one file's content: the stat it was read
// under and the hash of what was read. It is the same content when a new
// stat matches (same file, size and modification time) and the content
// was read at least racyWindow after that time (trusted); otherwise the
// file is read again and the hashes are compared.
type stamp struct {
	fi      os.FileInfo // nil: the file was missing
	sum     uint64
	trusted bool
}

// restamp returns the stamp of the file at path now and whether its
// content is that of old (have: old is a stamp of the file, not the zero
// value), reading the file only when the stat cannot tell; data is what
// it read, nil when it did not read or the file is missing. It fails when
// the file cannot be read for a reason other than being missing.
func restamp(path string, old stamp, have bool) (st stamp, same bool, data []byte, err error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return stamp{trusted: true}, have && old.fi == nil, nil, nil
	}
	if err != nil {
		return stamp{}, false, nil, err
	}
	if have && old.fi != nil && old.trusted && os.SameFile(old.fi, fi) &&
		fi.Size() == old.fi.Size() && fi.ModTime().Equal(old.fi.ModTime()) {
		return old, true, nil, nil
	}
	now := time.Now()
	data, err = os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) { // removed since the stat
		return stamp{trusted: true}, have && old.fi == nil, nil, nil
	}
	if err != nil {
		return stamp{}, false, nil, err
	}
	st = stamp{fi: fi, sum: maphash.Bytes(hashSeed, data), trusted: now.Sub(fi.ModTime()) > racyWindow}
	return st, have && old.fi != nil && old.sum == st.sum, data, nil
}

// planRead keeps the plan's units as the tasks file, with the results
// journal applied, last gave them, and what was read of the two files, so
// that a poll of a plan nobody changed parses nothing: it costs two stats
// (and, within racyWindow of a write, reading and hashing the files), not
// a parse of the whole file. It is safe for concurrent use; one caller
// reads and parses at a time.
type planRead struct {
	mu      sync.Mutex
	have    bool
	file    stamp
	journal stamp
	data    []byte     // the tasks file's content, as last read
	units   []TaskInfo // the units from the file and journal alone
	deps    int        // the units' dependencies in all
}

// read returns the plan's units with their status from the tasks file
// and the results journal (nothing from the run store or a run), and the
// number of their dependencies in all. The slice and its Dependencies are
// shared: callers copy before changing them. It fails when a file cannot
// be read or the tasks file is not valid (an edit in progress); the next
// call reads again.
func (pr *planRead) read(file, tag string, plan dispatch.Plan) ([]TaskInfo, int, error) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	fst, fsame, data, err := restamp(file, pr.file, pr.have)
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", file, err)
	}
	if fst.fi == nil {
		return nil, 0, fmt.Errorf("read %s: %w", file, fs.ErrNotExist)
	}
	jpath := plan.Journal()
	jst, jsame, _, err := restamp(jpath, pr.journal, pr.have)
	if err != nil {
		return nil, 0, fmt.Errorf("read the results journal %s: %w", jpath, err)
	}
	if pr.have && fsame && jsame {
		pr.file, pr.journal = fst, jst
		return pr.units, pr.deps, nil
	}
	if data == nil {
		data = pr.data // the same content as last read: only the journal changed
	}
	f, err := tasks.Parse(file, data, tag)
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", file, err)
	}
	if _, err := tasks.ApplyJournal(f, plan.Journal()); err != nil {
		return nil, 0, err
	}
	units, deps := unitsOf(f)
	pr.have, pr.file, pr.journal, pr.data, pr.units, pr.deps = true, fst, jst, data, units, deps
	return units, deps, nil
}

// unitsOf returns f's units as TaskInfos from the file alone, and the
// number of their dependencies in all.
func unitsOf(f *tasks.File) ([]TaskInfo, int) {
	var out []TaskInfo
	deps := 0
	for _, u := range f.Units() {
		t, _ := f.Task(u.ID)
		ti := TaskInfo{ID: u.ID, Parent: u.Parent, Title: t.Title, Status: t.Status, Reason: t.StatusReason, ParkedUntil: t.ParkedUntil,
			Dependencies: append([]string{}, u.Deps...), Attempt: t.RetryCount, MaxAttempts: t.Retries()}
		if ti.Status == "" {
			ti.Status = tasks.StatusPending
		}
		deps += len(u.Deps)
		out = append(out, ti)
	}
	return out, deps
}
