package workspace

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Commit records the working tree (tracked changes, deletions and new files
// not matched by .gitignore) as one commit on the task branch with the
// message "<task-id>: attempt <attempt>: <first line of summary>", the rest
// of summary as its body, signed by the configured author. When nothing
// changed since the last commit it makes no commit and returns the current
// commit with changed false.
//
// Commit is incremental: it reads only the files whose stat (size, mtime,
// ctime, inode, mode) changed since the workspace last looked at them, or
// that were racy then, and writes only the objects the repository lacks
// (the changed blobs and the trees along their paths), so a commit of an
// unchanged tree costs one lstat per file. A file over 1 MiB is hashed,
// scrubbed and written as a stream, so Commit holds a few MiB of it
// whatever its size. The index is rewritten when the recorded tree
// differs from the one it holds, so git status in the workspace stays
// clean.
//
// Commit refuses (ErrRefused, naming the path) a working tree or a commit
// an agent made on the branch itself that holds what git refuses to check
// out or fsck refuses (a .git alias, a .gitmodules that is a link or whose
// submodule url or path starts with '-'), a name with a control
// character, a file over Options.MaxFileBytes, or more new or changed
// files or bytes than MaxCommitFiles and MaxCommitBytes; it then records
// nothing.
//
// A changed file that holds a secret or an encoding of one (package
// internal/secret) is committed with it replaced by secret.Marker, and the
// commit message ends with a warning naming the file; [Workspace.Scrubbed]
// returns those files.
func (w *Workspace) Commit(ctx context.Context, attempt int, summary string) (hash string, changed bool, err error) {
	if attempt < 1 {
		return "", false, fmt.Errorf("workspace: commit of task %s: attempt %d must be 1 or more", w.taskID, attempt)
	}
	if err := w.lock(ctx); err != nil {
		return "", false, err
	}
	defer w.mu.Unlock()
	scan, tree, err := w.scanTree()
	if err != nil {
		return "", false, err
	}
	defer scan.abandon()
	ref, tip, err := w.tip()
	if err != nil {
		return "", false, err
	}
	if err := w.checkHistory(ctx, tip); err != nil {
		return "", false, err
	}
	tipTree, err := w.treeOf(tip)
	if err != nil {
		return "", false, err
	}
	if tree == tipTree {
		w.takeScrubbed()
		if err := scan.write(); err != nil {
			return "", false, err
		}
		scan.committed()
		if err := w.syncIndex(tree, scan.files); err != nil {
			return "", false, err
		}
		return tip.String(), false, nil
	}
	subject, body, _ := strings.Cut(strings.TrimSpace(summary), "\n")
	if subject = strings.TrimSpace(subject); subject == "" {
		subject = "no summary"
	}
	msg := fmt.Sprintf("%s: attempt %d: %s", w.taskID, attempt, subject)
	if body = strings.TrimSpace(body); body != "" {
		msg += "\n\n" + body
	}
	msg += w.takeScrubbed()
	sig := object.Signature{Name: w.name, Email: w.email, When: time.Now()}
	c := &object.Commit{Author: sig, Committer: sig, Message: msg, TreeHash: tree, ParentHashes: []plumbing.Hash{tip}}
	o := &plumbing.MemoryObject{}
	if err := c.Encode(o); err != nil {
		return "", false, fmt.Errorf("workspace: commit attempt %d in %s: %w", attempt, w.dir, err)
	}
	if err := scan.write(o); err != nil {
		return "", false, err
	}
	h := o.Hash()
	old := plumbing.NewHashReference(ref, tip)
	if err := w.repo.Storer.CheckAndSetReference(plumbing.NewHashReference(ref, h), old); err != nil {
		return "", false, fmt.Errorf("workspace: move %s to attempt %d in %s: %w; did something else commit there meanwhile?", ref.Short(), attempt, w.dir, err)
	}
	w.scan.commit, w.scan.commitTree = h, tree
	if w.checked == nil {
		w.checked = map[plumbing.Hash]bool{}
	}
	w.checked[h] = true
	scan.committed()
	if err := w.syncIndex(tree, scan.files); err != nil {
		return "", false, err
	}
	return h.String(), true, nil
}

// tip returns the branch HEAD points at (HEAD itself when detached) and
// its commit. It reads HEAD afresh on every call, so commits made in the
// workspace by other tools (an agent CLI running git commit) are kept as
// the parent of the next attempt.
func (w *Workspace) tip() (plumbing.ReferenceName, plumbing.Hash, error) {
	head, err := w.repo.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return "", plumbing.ZeroHash, fmt.Errorf("workspace: read HEAD of %s: %w", w.dir, err)
	}
	name := plumbing.HEAD
	if head.Type() == plumbing.SymbolicReference {
		name = head.Target()
	}
	ref, err := w.repo.Reference(name, true)
	if err != nil {
		return "", plumbing.ZeroHash, fmt.Errorf("workspace: read %s of %s: %w", name.Short(), w.dir, err)
	}
	return name, ref.Hash(), nil
}

// treeOf returns the tree of commit c, remembering the last answer.
func (w *Workspace) treeOf(c plumbing.Hash) (plumbing.Hash, error) {
	if c == w.scan.commit && !c.IsZero() {
		return w.scan.commitTree, nil
	}
	commit, err := w.repo.CommitObject(c)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("workspace: read commit %s in %s: %w", c, w.dir, err)
	}
	w.scan.commit, w.scan.commitTree = c, commit.TreeHash
	return commit.TreeHash, nil
}

// syncIndex writes the index for tree from the files of the scan that
// recorded it, unless the index already holds that tree.
func (w *Workspace) syncIndex(tree plumbing.Hash, files []scanned) error {
	if err := w.scan.syncIndex(w.repo.Storer, tree, files); err != nil {
		return fmt.Errorf("workspace: write index of %s: %w", w.dir, err)
	}
	return nil
}

// Reset makes the working tree equal to a commit and removes untracked files
// (ignored files stay). to is "base" (the commit the task started from) or
// "previous" (the last attempt's commit, which is the base before any
// attempt; this drops uncommitted changes). The branch keeps every attempt's
// commit: after Reset("base") the next Commit records the base plus the new
// changes on top of the last attempt, so the history shows all attempts.
func (w *Workspace) Reset(ctx context.Context, to string) error {
	if to != "base" && to != "previous" {
		return fmt.Errorf("workspace: reset of task %s to %q: want \"base\" or \"previous\"", w.taskID, to)
	}
	if err := w.lock(ctx); err != nil {
		return err
	}
	defer w.mu.Unlock()
	// go-git rewrites the index: what it tracks is read from it again.
	w.scan.indexTree, w.scan.tracked, w.scan.trackedDirs, w.scan.gitlinks = plumbing.ZeroHash, nil, nil, nil
	head, err := w.repo.Head()
	if err != nil {
		return fmt.Errorf("workspace: %s: %w", w.dir, err)
	}
	target := head.Hash()
	if to == "base" {
		target = w.base
	}
	wt, err := w.repo.Worktree()
	if err != nil {
		return fmt.Errorf("workspace: %s: %w", w.dir, err)
	}
	if err := wt.Reset(&git.ResetOptions{Mode: git.HardReset, Commit: target}); err != nil {
		return fmt.Errorf("workspace: reset %s to %s: %w", w.dir, to, err)
	}
	if target != head.Hash() {
		if err := w.repo.Storer.SetReference(plumbing.NewHashReference(w.branch, head.Hash())); err != nil {
			return fmt.Errorf("workspace: restore branch %s after reset: %w", w.branch.Short(), err)
		}
	}
	if err := wt.Clean(&git.CleanOptions{Dir: true}); err != nil {
		return fmt.Errorf("workspace: remove untracked files in %s: %w", w.dir, err)
	}
	return nil
}

// Diff returns the unified diff (three lines of context, git's format) from
// the base commit to the working tree, committed and uncommitted changes
// alike, as Commit would record them; "" when there is none.
func (w *Workspace) Diff(ctx context.Context) (string, error) {
	if err := w.lock(ctx); err != nil {
		return "", err
	}
	defer w.mu.Unlock()
	scan, now, err := w.scanTree()
	if err != nil {
		return "", err
	}
	if err := scan.write(); err != nil {
		return "", err
	}
	baseCommit, err := w.repo.CommitObject(w.base)
	if err != nil {
		return "", fmt.Errorf("workspace: base %s: %w", w.base, err)
	}
	if baseCommit.TreeHash == now {
		return "", nil
	}
	from, err := baseCommit.Tree()
	if err != nil {
		return "", fmt.Errorf("workspace: base tree: %w", err)
	}
	to, err := w.repo.TreeObject(now)
	if err != nil {
		return "", fmt.Errorf("workspace: working tree: %w", err)
	}
	return diffTrees(ctx, w.repo.Storer, from, to, "of the working tree")
}

// DiffCommit returns the unified diff that commit hash made against its
// first parent (against the empty tree for a root commit), e.g. one
// attempt's change. It is "" for a commit that changed nothing.
func (w *Workspace) DiffCommit(ctx context.Context, hash string) (string, error) {
	if err := w.lock(ctx); err != nil {
		return "", err
	}
	defer w.mu.Unlock()
	return diffCommit(ctx, w.repo, hash)
}

// diffCommit is DiffCommit in repo.
func diffCommit(ctx context.Context, repo *git.Repository, hash string) (string, error) {
	c, err := repo.CommitObject(plumbing.NewHash(hash))
	if err != nil {
		return "", fmt.Errorf("workspace: commit %s: %w", hash, err)
	}
	to, err := c.Tree()
	if err != nil {
		return "", fmt.Errorf("workspace: commit %s: %w", hash, err)
	}
	var from *object.Tree
	if c.NumParents() > 0 {
		p, err := c.Parent(0)
		if err != nil {
			return "", fmt.Errorf("workspace: parent of %s: %w", hash, err)
		}
		if p.TreeHash == c.TreeHash {
			return "", nil
		}
		if from, err = p.Tree(); err != nil {
			return "", fmt.Errorf("workspace: parent of %s: %w", hash, err)
		}
	}
	return diffTrees(ctx, repo.Storer, from, to, hash)
}

// diffTrees returns the unified diff from one tree to another (nil: the
// empty tree) of st, every name shown (see patchText); what names the diff
// in errors.
func diffTrees(ctx context.Context, st storer.EncodedObjectStorer, from, to *object.Tree, what string) (string, error) {
	changes, err := object.DiffTreeWithOptions(ctx, from, to, nil)
	if err != nil {
		return "", fmt.Errorf("workspace: diff %s: %w", what, err)
	}
	text, err := patchText(ctx, st, changes)
	if err != nil {
		return "", fmt.Errorf("workspace: diff %s: %w", what, err)
	}
	return text, nil
}
