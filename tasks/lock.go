package tasks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/statgraph/statgraph/internal/fsutil"
)

// lockGrace is how long an empty lock file counts as being set up by its
// creator rather than left behind by a crash.
const lockGrace = 2 * time.Second

// FileLock is the lock statgraph takes on a tasks file for the length of a
// run, so that two runs never write the same file. It is the file
// "<tasks file>.lock", created exclusively, holding the owner's pid and
// start time, and kept flock'ed while held.
type FileLock struct {
	Path string // the lock file

	f *os.File
}

// lockInfo is the content of a lock file.
type lockInfo struct {
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
}

// LockedError reports that another run holds the lock.
type LockedError struct {
	Path     string    // the tasks file
	LockPath string    // the lock file
	PID      int       // the holder's pid, 0 when the lock file does not say
	Started  time.Time // when the holder took the lock, zero when unknown
}

// Error says who holds the lock and what to do about it.
func (e *LockedError) Error() string {
	who := "another statgraph run"
	if e.PID > 0 {
		who = fmt.Sprintf("another statgraph run (pid %d)", e.PID)
	}
	return fmt.Sprintf("%s is using %s; wait for it or remove %s if that process is gone", who, e.Path, e.LockPath)
}

// Lock takes the lock on the tasks file at path. When another process
// holds it, Lock returns a *LockedError naming the lock file and the pid.
//
// A lock is stale, and Lock takes it over, when no process holds the flock
// on the lock file and its pid is not running (or is this process, as
// happens when a container restarts with the same pid), or when the file is
// empty and older than a couple of seconds (its creator crashed before
// writing). Lock does not wait: it succeeds or fails at once.
func Lock(path string) (*FileLock, error) {
	lockPath := path + ".lock"
	for range 5 {
		f, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			if err := fsutil.Flock(f, true, true); err != nil {
				f.Close()
				return nil, &LockedError{Path: path, LockPath: lockPath}
			}
			return claim(f, lockPath)
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create lock file %s: %w", lockPath, err)
		}

		f, err = os.OpenFile(lockPath, os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue // released meanwhile; try to create it again
		}
		if err != nil {
			return nil, fmt.Errorf("open lock file %s: %w", lockPath, err)
		}
		info, empty := readLockInfo(f)
		if err := fsutil.Flock(f, true, true); err != nil {
			f.Close()
			return nil, &LockedError{Path: path, LockPath: lockPath, PID: info.PID, Started: info.Started}
		}
		if !sameFile(f, lockPath) {
			f.Close() // removed and maybe re-created by its owner; start over
			continue
		}
		info, empty = readLockInfo(f) // re-read: now nobody can be writing it
		if !stale(f, info, empty) {
			f.Close()
			return nil, &LockedError{Path: path, LockPath: lockPath, PID: info.PID, Started: info.Started}
		}
		return claim(f, lockPath)
	}
	return nil, fmt.Errorf("lock %s: the lock file keeps changing; another statgraph run is starting or stopping, try again", lockPath)
}

// claim writes this process's info into a lock file whose flock it holds.
func claim(f *os.File, lockPath string) (*FileLock, error) {
	data, _ := json.Marshal(lockInfo{PID: os.Getpid(), Started: time.Now().UTC()}) // cannot fail
	data = append(data, '\n')
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("write lock file %s: %w", lockPath, err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("write lock file %s: %w", lockPath, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("write lock file %s: %w", lockPath, err)
	}
	return &FileLock{Path: lockPath, f: f}, nil
}

// stale decides whether a lock file whose flock nobody holds was left behind.
func stale(f *os.File, info lockInfo, empty bool) bool {
	if empty || info.PID <= 0 {
		st, err := f.Stat()
		return err == nil && time.Since(st.ModTime()) > lockGrace
	}
	return info.PID == os.Getpid() || !fsutil.ProcessAlive(info.PID)
}

// readLockInfo reads a lock file's content; empty reports that it had none
// that could be read.
func readLockInfo(f *os.File) (info lockInfo, empty bool) {
	data, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<16))
	if err != nil || len(data) == 0 || json.Unmarshal(data, &info) != nil {
		return lockInfo{}, true
	}
	return info, false
}

// sameFile reports whether f is still the file at path.
func sameFile(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// Unlock removes the lock file and releases the lock. Unlock on a nil or
// already released lock does nothing. It is not safe for concurrent use.
func (l *FileLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := os.Remove(l.Path)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	if err != nil {
		return fmt.Errorf("remove lock file: %w", err)
	}
	return nil
}
