package workspace

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

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
// finishes the job. Finish then checks the branch as CheckPublished does.
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
