package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// publishConfig is what every git command that writes into the source runs
// with: objects and refs fsynced before they are renamed into place, the
// new objects kept as one pack (as the publishing of older versions did)
// rather than as loose files, and no hook of the source repository run (a
// hook planted there must not run with statgraph's rights on every
// publish).
var publishConfig = []string{"-c", "core.fsync=committed", "-c", "fetch.unpackLimit=1", "-c", "core.hooksPath=/dev/null"}

// Finish publishes the task branch into the source repository, pointing at
// the workspace's last commit, so the user reviews and merges it with
// ordinary git. Uncommitted changes are not published; call Commit first.
//
// Publishing is git's own fetch from the workspace into the source (the
// git program must be on PATH, else ErrNoGit): git writes the new pack and
// its index under temporary names, fsyncs them, renames the index last and
// then moves the branch under a lock file, so a process killed at any
// moment (statgraph or git, kill -9 included) leaves the source passing git
// fsck, with the branch either unchanged or complete; calling Finish again
// finishes the job. A lock file of the task branch that such a kill left in
// the source is removed (once it has not changed for two seconds) and the
// publish retried; a packed-refs.lock, shared with the user's own git, only
// when it is over a minute old. Finish then checks the branch as
// CheckPublished does.
//
// Finish never touches the source's checked-out branch, index or working
// tree: it fails with ErrBranchCheckedOut if the source (or one of its
// worktrees) has the task branch checked out, and with ErrDiverged if that
// branch has commits the workspace does not have (the user committed on
// it); it is a fast-forward otherwise. A branch left pointing at a commit
// the source cannot read (by an older, not crash-safe publish) is replaced.
// Calling Finish again after more commits moves the branch forward.
// Cancelling ctx kills git; the source stays consistent.
func (w *Workspace) Finish(ctx context.Context) error {
	if err := w.lock(ctx); err != nil {
		return err
	}
	defer w.mu.Unlock()
	tip, err := w.repo.Head()
	if err != nil {
		return fmt.Errorf("workspace: %s: %w", w.dir, err)
	}
	ref := w.branch.String()
	args := append(append([]string{}, publishConfig...), "fetch", "--no-tags", "--no-write-fetch-head",
		"--no-recurse-submodules", "--no-auto-gc", w.dir, ref+":"+ref)
	// git's fetch refuses to run while any branch points at a commit the
	// repository cannot read; a task branch left so (this one, or another
	// task's, which its unit publishes again) is dropped, a few times at
	// most.
	// A git killed while it held a lock (kill -9 of statgraph's process
	// group) leaves that lock file behind, and every later fetch stops on
	// it; the task branch's own lock is removed once, and packed-refs.lock
	// once when it is old (see removeStaleLock).
	refLockRemoved, packedLockRemoved := false, false
	for drops := 0; ; drops++ {
		_, err := runGit(ctx, w.source, args...)
		if err == nil {
			break
		}
		msg := err.Error()
		switch m := badStatgraphRef.FindStringSubmatch(msg); {
		case m != nil && drops < 10:
			if err := w.dropUnreadableBranch(ctx, m[1]); err != nil {
				return err
			}
			continue
		case !refLockRemoved && w.lockNamed(ctx, msg, ref):
			refLockRemoved = true
			if err := w.removeStaleLock(ctx, ref, refLockSettle); err != nil {
				return err
			}
			continue
		case !packedLockRemoved && w.lockNamed(ctx, msg, "packed-refs"):
			packedLockRemoved = true
			if err := w.removeStaleLock(ctx, "packed-refs", packedRefsLockAge); err != nil {
				return err
			}
			continue
		case strings.Contains(msg, "refusing to fetch into branch"):
			return fmt.Errorf("%w: %s has %s checked out; switch it to another branch and call Finish again", ErrBranchCheckedOut, w.source, w.branch.Short())
		case strings.Contains(msg, "non-fast-forward"):
			return fmt.Errorf("%w (%s in %s is not an ancestor of the workspace's commit %s); rename or delete that branch and call Finish again",
				ErrDiverged, w.branch.Short(), w.source, tip.Hash())
		}
		return fmt.Errorf("workspace: publish %s into %s: %w", w.branch.Short(), w.source, err)
	}
	return w.checkPublished(ctx, tip.Hash())
}

// CheckPublished reports whether the source repository has the task branch
// at the workspace's last commit and can read that commit and every object
// it reaches that the workspace's base does not (what Finish wrote). It
// returns an error wrapping ErrNotPublished otherwise (saying what is
// missing; calling Finish again repairs it), or ErrNoGit. It reads only.
func (w *Workspace) CheckPublished(ctx context.Context) error {
	if err := w.lock(ctx); err != nil {
		return err
	}
	defer w.mu.Unlock()
	tip, err := w.repo.Head()
	if err != nil {
		return fmt.Errorf("workspace: %s: %w", w.dir, err)
	}
	return w.checkPublished(ctx, tip.Hash())
}

func (w *Workspace) checkPublished(ctx context.Context, tip plumbing.Hash) error {
	src, err := openSource(w.source)
	if err != nil {
		return err
	}
	got := "no such branch"
	if ref, err := src.Storer.Reference(w.branch); err == nil {
		got = ref.Hash().String()
	}
	if got != tip.String() {
		return fmt.Errorf("%w: %s in %s is at %s, not at the workspace's commit %s; call Finish to publish it",
			ErrNotPublished, w.branch.Short(), w.source, got, tip)
	}
	if _, err := runGit(ctx, w.source, "rev-list", "--objects", "--quiet", tip.String(), "--not", w.base.String()); err != nil {
		if ctx.Err() != nil || errors.Is(err, ErrNoGit) {
			return err
		}
		return fmt.Errorf("%w: %s in %s cannot be read: %v; call Finish to publish it again", ErrNotPublished, w.branch.Short(), w.source, err)
	}
	return nil
}

// badStatgraphRef finds the task branch git names when it stops on one
// that points at an object it cannot read.
var badStatgraphRef = regexp.MustCompile(`bad object (refs/heads/` + regexp.QuoteMeta(BranchPrefix) + `[^\s:]+)`)

// dropUnreadableBranch deletes the branch ref (a task branch) from the
// source if it points at a commit the source cannot read in full, so a
// fetch can set it again; git fetch would refuse to move it, as it cannot
// tell that the move is a fast-forward. The deletion is conditional on the
// branch's value, so a branch moved meanwhile is left alone.
func (w *Workspace) dropUnreadableBranch(ctx context.Context, ref string) error {
	short := strings.TrimPrefix(ref, "refs/heads/")
	out, err := runGit(ctx, w.source, "for-each-ref", "--format=%(objectname)", ref)
	if err != nil {
		return fmt.Errorf("workspace: read %s in %s: %w", short, w.source, err)
	}
	old := strings.TrimSpace(string(out))
	if old == "" {
		return nil
	}
	if _, err := runGit(ctx, w.source, "rev-list", "--objects", "--quiet", "-1", old); err == nil || ctx.Err() != nil {
		return ctx.Err()
	}
	if _, err := runGit(ctx, w.source, append(append([]string{}, publishConfig...), "update-ref", "-d", ref, old)...); err != nil {
		return fmt.Errorf("workspace: %s in %s points at %s, which cannot be read, and deleting it failed: %w; delete the branch (git branch -D %s) and try again",
			short, w.source, old, err, short)
	}
	return nil
}

// lockExists finds the lock file git could not create, in its message
// "Unable to create '<path>.lock': File exists".
var lockExists = regexp.MustCompile(`Unable to create '([^']+)\.lock': File exists`)

// How old a lock must be before Finish removes it: the task branch's own
// lock is held by a live git for the few milliseconds of its ref update, so
// one that stays refLockSettle is stale; packed-refs.lock is shared with
// the user's own git (git pack-refs, git gc, branch deletions), so only one
// untouched for packedRefsLockAge is taken as left by a killed process.
const (
	refLockSettle     = 2 * time.Second
	packedRefsLockAge = time.Minute
)

// lockNamed reports whether git's message msg says that it stopped on an
// existing lock file of name (a ref such as refs/heads/statgraph/x, or
// packed-refs) in the source's git directory.
func (w *Workspace) lockNamed(ctx context.Context, msg, name string) bool {
	m := lockExists.FindStringSubmatch(msg)
	if m == nil {
		return false
	}
	want, err := w.lockPath(ctx, name)
	if err != nil {
		return false
	}
	if m[1]+".lock" == want {
		return true
	}
	// The same file under another spelling of its directory (a symbolic
	// link in the path).
	got, err1 := os.Stat(filepath.Dir(m[1] + ".lock"))
	exp, err2 := os.Stat(filepath.Dir(want))
	return err1 == nil && err2 == nil && os.SameFile(got, exp) && filepath.Base(m[1]) == filepath.Base(strings.TrimSuffix(want, ".lock"))
}

// lockPath returns the path of the lock file git takes for name (a ref
// under refs/heads/statgraph/, or packed-refs) in the source: both live in
// the common git directory, shared by all the source's worktrees.
func (w *Workspace) lockPath(ctx context.Context, name string) (string, error) {
	if name != "packed-refs" && (!strings.HasPrefix(name, "refs/heads/"+BranchPrefix) || name != w.branch.String()) {
		return "", fmt.Errorf("workspace: %s is not this task's branch", name)
	}
	out, err := runGit(ctx, w.source, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", err
	}
	return filepath.Join(strings.TrimSpace(string(out)), filepath.FromSlash(name)+".lock"), nil
}

// removeStaleLock removes the lock file of name (this task's branch, or
// packed-refs) that a killed git left in the source, once it has not
// changed for minAge. Only statgraph writes branches under
// refs/heads/statgraph/, and a statgraph run holds its tasks file's lock,
// so no other publish of this task's branch is in flight: a lock of it
// that stays is left by a git killed mid-update. packed-refs.lock is shared
// with the user's git, hence its longer age, and an error rather than a
// wait when it is younger.
func (w *Workspace) removeStaleLock(ctx context.Context, name string, minAge time.Duration) error {
	path, err := w.lockPath(ctx, name)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return nil // gone meanwhile: the retry goes ahead
	}
	age := time.Since(fi.ModTime())
	if age < minAge {
		if name == "packed-refs" {
			return fmt.Errorf("workspace: publish %s into %s: %s exists and is only %v old; another git command may be running in %s: wait for it (a lock left by a killed git is removed once it is %v old) or remove the file yourself",
				w.branch.Short(), w.source, path, age.Round(time.Second), w.source, minAge)
		}
		t := time.NewTimer(minAge - age)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		again, err := os.Lstat(path)
		if err != nil {
			return nil
		}
		if !os.SameFile(fi, again) || !again.ModTime().Equal(fi.ModTime()) || again.Size() != fi.Size() {
			return fmt.Errorf("workspace: publish %s into %s: %s is in use by another git process; try again", w.branch.Short(), w.source, path)
		}
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("workspace: publish %s into %s: remove the stale lock %s: %w", w.branch.Short(), w.source, path, err)
	}
	return nil
}
