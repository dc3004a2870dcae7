package workspace

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/statgraph/statgraph/internal/fsutil"
)

// pushlock.go lets a PushLocal remove the ref lock files an earlier
// PushLocal left on the remote when its process was killed while holding
// them. git leaves such a lock (<ref>.lock, packed-refs.lock) for a person
// to remove; on a shared remote a worker killed mid-publish would make every
// later push of that branch fail, the worker taking the unit over included.
//
// Each PushLocal keeps a journal, <gitDir>/statgraph-locks/push-*.journal,
// under an exclusive flock for as long as it runs (the kernel drops the
// flock when the process dies, however it dies). A lock file is made as a
// hard link of a file of its own in that directory (lock-<random>), named
// in the journal before it is made, and kept until the push ends, so the
// inode of a lock file this push made cannot be reused by another file
// while the journal names it. A later PushLocal that can take a journal's
// flock knows its writer is gone: it removes each lock file that is still
// the very file the journal names (a lock file git or another push made
// since is another file and is left alone), then the journal's files. A
// push stalled (SIGSTOP) but alive keeps its flock, and its locks.

// locksDir is the directory of the journals and lock files, in the remote.
const locksDir = "statgraph-locks"

// lockJournal is one PushLocal's journal of the lock files it holds.
type lockJournal struct {
	dir   string   // <gitDir>/statgraph-locks
	name  string   // the journal's path
	f     *os.File // the journal, flocked
	temps []string // its lock-<random> files, removed at close
}

// newJournal starts a journal in the remote gitDir. It is made under a
// name no other push reads, flocked, then renamed to its journal name, so
// a push breaking stale locks never sees it unlocked. Where flock does not
// exist (or the remote is read-only) it returns nil: the push then takes
// plain lock files, which a kill leaves behind as git's own.
func newJournal(gitDir string) *lockJournal {
	if !fsutil.FlockWorks {
		return nil
	}
	dir := filepath.Join(gitDir, locksDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil
	}
	f, err := os.CreateTemp(dir, "new-*")
	if err != nil {
		return nil
	}
	if fsutil.Flock(f, true, true) != nil {
		f.Close()
		os.Remove(f.Name())
		return nil
	}
	name := filepath.Join(dir, "push-"+strings.TrimPrefix(filepath.Base(f.Name()), "new-")+".journal")
	if err := os.Rename(f.Name(), name); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil
	}
	return &lockJournal{dir: dir, name: name, f: f}
}

// take creates the lock file path exclusively, retrying for refLockWait
// while another writer holds it (as takeLock), and returns it open for
// writing. With a journal (j not nil) the lock is one a later push can
// remove if this process dies holding it.
func (j *lockJournal) take(ctx context.Context, gitDir, path string) (*os.File, error) {
	if j == nil {
		return takeLock(ctx, path)
	}
	rel, err := filepath.Rel(gitDir, path)
	if err != nil {
		return nil, err
	}
	var b [8]byte
	rand.Read(b[:])
	temp := filepath.Join(j.dir, "lock-"+hex.EncodeToString(b[:]))
	if _, err := j.f.WriteString(filepath.Base(temp) + "\t" + filepath.ToSlash(rel) + "\n"); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(temp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	j.temps = append(j.temps, temp)
	deadline := time.Now().Add(refLockWait)
	for {
		err := os.Link(temp, path)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			f.Close()
			if errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			return takeLock(ctx, path) // no hard links here: a plain lock file
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%s is held by another writer (or left by a killed git: remove it if no git process is using the repository): %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// close ends the journal once every lock it names is released (renamed
// into place or removed): its files go, then its flock.
func (j *lockJournal) close() {
	if j == nil {
		return
	}
	for _, t := range j.temps {
		os.Remove(t)
	}
	os.Remove(j.name)
	j.f.Close()
}

// breakStaleLocks removes the lock files that PushLocals killed while
// holding them left in the remote gitDir (see the top of this file), and
// their journals. A journal whose push is alive is left alone. It fails
// only when a stale lock file cannot be removed.
func breakStaleLocks(gitDir string) error {
	if !fsutil.FlockWorks {
		return nil
	}
	dir := filepath.Join(gitDir, locksDir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil // none yet (or unreadable: the push fails on its own)
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "push-") || !strings.HasSuffix(e.Name(), ".journal") {
			continue
		}
		if err := breakJournal(gitDir, filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// breakJournal is breakStaleLocks for the journal at path.
func breakJournal(gitDir, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil // another push broke it meanwhile
	}
	defer f.Close()
	if fsutil.Flock(f, true, true) != nil {
		return nil // its push is alive
	}
	dir := filepath.Dir(path)
	sc := bufio.NewScanner(f)
	var temps []string
	for sc.Scan() {
		temp, rel, ok := strings.Cut(sc.Text(), "\t")
		if !ok || strings.Contains(temp, "/") || strings.Contains(rel, "..") {
			continue
		}
		temp = filepath.Join(dir, temp)
		temps = append(temps, temp)
		lock := filepath.Join(gitDir, filepath.FromSlash(rel))
		tfi, err1 := os.Lstat(temp)
		lfi, err2 := os.Lstat(lock)
		if err1 == nil && err2 == nil && os.SameFile(tfi, lfi) {
			if err := os.Remove(lock); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove the lock %s a killed push left: %w", lock, err)
			}
		}
	}
	for _, t := range temps {
		os.Remove(t)
	}
	os.Remove(path)
	return nil
}
