package workspace

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Finish publishes the task branch into the source repository as
// statgraph/<task-id>, pointing at the workspace's last commit, so the user
// reviews and merges it with ordinary git. It is what `git fetch` from the
// workspace would do: the objects the source lacks are copied into its
// object database, then the branch ref is set. Uncommitted changes are not
// published; call Commit first.
//
// Finish never touches the source's checked-out branch, index or working
// tree: it fails with ErrBranchCheckedOut if the source has the task branch
// checked out, and with ErrDiverged if that branch has commits the workspace
// does not have (the user committed on it); it is a fast-forward otherwise.
// Calling Finish again after more commits moves the branch forward.
func (w *Workspace) Finish(ctx context.Context) error {
	if err := w.lock(ctx); err != nil {
		return err
	}
	defer w.mu.Unlock()
	src, err := openSource(w.source)
	if err != nil {
		return err
	}
	if head, err := src.Storer.Reference(plumbing.HEAD); err == nil && head.Type() == plumbing.SymbolicReference && head.Target() == w.branch {
		return fmt.Errorf("%w: %s has %s checked out; switch it to another branch and call Finish again", ErrBranchCheckedOut, w.source, w.branch.Short())
	}
	tip, err := w.repo.Head()
	if err != nil {
		return fmt.Errorf("workspace: %s: %w", w.dir, err)
	}
	if err := copyMissing(ctx, w.repo.Storer, src.Storer, tip.Hash()); err != nil {
		return fmt.Errorf("workspace: copy commits of %s into %s: %w", w.branch.Short(), w.source, err)
	}
	old, err := src.Storer.Reference(w.branch)
	switch {
	case errors.Is(err, plumbing.ErrReferenceNotFound):
		old = nil
	case err != nil:
		return fmt.Errorf("workspace: read %s in %s: %w", w.branch.Short(), w.source, err)
	case old.Hash() == tip.Hash():
		return nil
	default:
		if err := checkFastForward(src.Storer, old.Hash(), tip.Hash()); err != nil {
			return fmt.Errorf("%w (%s in %s is at %s); rename or delete that branch and call Finish again: %v",
				ErrDiverged, w.branch.Short(), w.source, old.Hash(), err)
		}
	}
	if err := src.Storer.CheckAndSetReference(plumbing.NewHashReference(w.branch, tip.Hash()), old); err != nil {
		return fmt.Errorf("workspace: set %s in %s: %w", w.branch.Short(), w.source, err)
	}
	return nil
}

// checkFastForward returns nil if old is an ancestor of tip in s.
func checkFastForward(s storer.EncodedObjectStorer, old, tip plumbing.Hash) error {
	oldC, err := object.GetCommit(s, old)
	if err != nil {
		return err
	}
	tipC, err := object.GetCommit(s, tip)
	if err != nil {
		return err
	}
	ok, err := oldC.IsAncestor(tipC)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("it is not an ancestor of the workspace's commit")
	}
	return nil
}

// copyMissing copies into dst every object reachable from tip that dst does
// not have, walking history only until it reaches commits dst already has
// (so the cost is proportional to the new work, not the repository's size).
// The objects are written as one pack, as git fetch does, rather than one
// loose file each.
func copyMissing(ctx context.Context, from, dst storer.EncodedObjectStorer, tip plumbing.Hash) error {
	c := copier{from: from, dst: dst, queued: map[plumbing.Hash]bool{}}
	stack := []plumbing.Hash{tip}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if c.has(h) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		commit, err := object.GetCommit(from, h)
		if err != nil {
			return err
		}
		if err := c.tree(commit.TreeHash); err != nil {
			return err
		}
		if err := c.add(h); err != nil {
			return err
		}
		stack = append(stack, commit.ParentHashes...)
	}
	return writeObjects(dst, c.objs)
}

// copier gathers the objects dst lacks.
type copier struct {
	from, dst storer.EncodedObjectStorer
	objs      []plumbing.EncodedObject
	queued    map[plumbing.Hash]bool
}

func (c *copier) has(h plumbing.Hash) bool {
	return c.queued[h] || c.dst.HasEncodedObject(h) == nil
}

// tree gathers the tree t and whatever below it dst lacks; a tree dst
// already has is complete there, so it is not descended into.
func (c *copier) tree(t plumbing.Hash) error {
	if c.has(t) {
		return nil
	}
	tree, err := object.GetTree(c.from, t)
	if err != nil {
		return err
	}
	for _, e := range tree.Entries {
		switch {
		case e.Mode == filemode.Submodule || c.has(e.Hash):
		case e.Mode == filemode.Dir:
			if err := c.tree(e.Hash); err != nil {
				return err
			}
		default:
			if err := c.add(e.Hash); err != nil {
				return err
			}
		}
	}
	return c.add(t)
}

func (c *copier) add(h plumbing.Hash) error {
	o, err := c.from.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return err
	}
	c.queued[h] = true
	c.objs = append(c.objs, o)
	return nil
}
