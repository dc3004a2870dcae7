package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/statgraph/statgraph/internal/proc"
)

// Finish publishes the task branch into the source repository, pointing at
// the workspace's last commit, so the user reviews and merges it with
// ordinary git. Uncommitted changes are not published; call Commit first.
//
// Publishing happens in this process, in the order git writes (see
// publish.go): the objects the source lacks as one pack, written under a
// temporary name, fsynced, renamed, with its index renamed last; then the
// branch under git's lock file (refs/heads/<branch>.lock, fsynced, renamed
// over the ref). So a process killed at any moment (kill -9 included)
// leaves the source passing git fsck, with the branch either unchanged or
// complete; calling Finish again finishes the job. A lock file of the task
// branch that such a kill left in the source is removed once it has not
// changed for two seconds, and the publish retried. Finish then reads the
// branch back. Each move of the branch appends its reflog entry (unless the
// source sets core.logAllRefUpdates to false). Once statgraph's own packs in
// the source number 16, Finish merges them into one before it returns (see
// repack.go); that merge waits for the Prepares, publishes and checks of
// the same source in this process and other statgraph processes, and a
// failed merge does not fail Finish.
//
// Finish publishes nothing, failing with ErrRefused, when a commit on the
// branch that Commit did not make (an agent CLI's own git commit) holds
// what Commit refuses (see checkHistory).
//
// Finish never touches the source's checked-out branch, index or working
// tree: it fails with ErrBranchCheckedOut if the source (or one of its
// worktrees) has the task branch checked out, and with ErrDiverged if that
// branch has commits the workspace does not have (the user committed on
// it); it is a fast-forward otherwise. A branch left pointing at a commit
// the source cannot read (by an older, not crash-safe publish) is replaced;
// other branches are not read at all, so the cost does not grow with their
// number. Calling Finish again after more commits moves the branch
// forward. Cancelling ctx stops it between steps; the source stays
// consistent. It needs no git program unless the branch holds commits
// Commit did not make.
func (w *Workspace) Finish(ctx context.Context) error {
	if err := w.lock(ctx); err != nil {
		return err
	}
	defer w.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	tip, err := w.repo.Head()
	if err != nil {
		return fmt.Errorf("workspace: %s: %w", w.dir, err)
	}
	if err := w.checkHistory(ctx, tip.Hash()); err != nil {
		return err
	}
	return w.publish(ctx, tip.Hash())
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
	defer holdSource(w.source)()
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
	if _, err := proc.RunGit(ctx, proc.Git{Dir: w.source}, "rev-list", "--objects", "--quiet", tip.String(), "--not", w.base.String()); err != nil {
		if ctx.Err() != nil || errors.Is(err, ErrNoGit) {
			return err
		}
		return fmt.Errorf("%w: %s in %s cannot be read: %v; call Finish to publish it again", ErrNotPublished, w.branch.Short(), w.source, err)
	}
	return nil
}

// refLockSettle is how long the task branch's lock file must stay
// unchanged before Finish removes it: a live publish holds it for the few
// milliseconds of its ref update, so one that stays is left by a process
// killed mid-update.
const refLockSettle = 2 * time.Second

// lockPath returns the path of the lock file of the task branch name in
// the source: it lives in the common git directory, shared by all the
// source's worktrees.
func (w *Workspace) lockPath(name string) (string, error) {
	if name != w.branch.String() {
		return "", fmt.Errorf("workspace: %s is not this task's branch", name)
	}
	_, common, err := sourceGitDirs(w.source)
	if err != nil {
		return "", err
	}
	return filepath.Join(common, filepath.FromSlash(name)+".lock"), nil
}

// removeStaleLock removes the lock file of name (this task's branch) that
// a killed process left in the source, once it has not changed for minAge.
// Only statgraph writes branches under refs/heads/statgraph/, and a
// statgraph run holds its tasks file's lock, so no other publish of this
// task's branch is in flight: a lock of it that stays is left by a process
// killed mid-update.
func (w *Workspace) removeStaleLock(ctx context.Context, name string, minAge time.Duration) error {
	path, err := w.lockPath(name)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return nil // gone meanwhile: the retry goes ahead
	}
	age := time.Since(fi.ModTime())
	if age < minAge {
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
			return fmt.Errorf("workspace: publish %s into %s: %s is in use by another process; try again", w.branch.Short(), w.source, path)
		}
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("workspace: publish %s into %s: remove the stale lock %s: %w", w.branch.Short(), w.source, path, err)
	}
	return nil
}
