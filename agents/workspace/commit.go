package workspace

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Commit records the working tree (tracked changes, deletions and new files
// not matched by .gitignore) as one commit on the task branch with the
// message "<task-id>: attempt <attempt>: <first line of summary>", the rest
// of summary as its body, signed by the configured author. When nothing
// changed since the last commit it makes no commit and returns the current
// commit with changed false.
func (w *Workspace) Commit(ctx context.Context, attempt int, summary string) (hash string, changed bool, err error) {
	if attempt < 1 {
		return "", false, fmt.Errorf("workspace: commit of task %s: attempt %d must be 1 or more", w.taskID, attempt)
	}
	if err := w.lock(ctx); err != nil {
		return "", false, err
	}
	defer w.mu.Unlock()
	wt, err := w.stageAll()
	if err != nil {
		return "", false, err
	}
	subject, body, _ := strings.Cut(strings.TrimSpace(summary), "\n")
	if subject = strings.TrimSpace(subject); subject == "" {
		subject = "no summary"
	}
	msg := fmt.Sprintf("%s: attempt %d: %s", w.taskID, attempt, subject)
	if body = strings.TrimSpace(body); body != "" {
		msg += "\n\n" + body
	}
	sig := &object.Signature{Name: w.name, Email: w.email, When: time.Now()}
	h, err := wt.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig})
	if errors.Is(err, git.ErrEmptyCommit) {
		head, err := w.repo.Head()
		if err != nil {
			return "", false, fmt.Errorf("workspace: %s: %w", w.dir, err)
		}
		return head.Hash().String(), false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("workspace: commit attempt %d in %s: %w", attempt, w.dir, err)
	}
	return h.String(), true, nil
}

// stageAll updates the workspace's own index to the working tree: new,
// modified and deleted files, honouring .gitignore.
func (w *Workspace) stageAll() (*git.Worktree, error) {
	wt, err := w.repo.Worktree()
	if err != nil {
		return nil, fmt.Errorf("workspace: %s: %w", w.dir, err)
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		return nil, fmt.Errorf("workspace: stage changes in %s: %w", w.dir, err)
	}
	return wt, nil
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
	if _, err := w.stageAll(); err != nil {
		return "", err
	}
	idx, err := w.repo.Storer.Index()
	if err != nil {
		return "", fmt.Errorf("workspace: read index of %s: %w", w.dir, err)
	}
	b := treeBuilder{repo: w.repo, trees: map[string]*object.Tree{".": {}}}
	for _, e := range idx.Entries {
		b.add(e.Name, object.TreeEntry{Name: path.Base(e.Name), Mode: e.Mode, Hash: e.Hash})
	}
	now, err := b.store(".")
	if err != nil {
		return "", fmt.Errorf("workspace: %s: %w", w.dir, err)
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
	changes, err := object.DiffTreeWithOptions(ctx, from, to, nil)
	if err != nil {
		return "", fmt.Errorf("workspace: diff: %w", err)
	}
	patch, err := changes.PatchContext(ctx)
	if err != nil {
		return "", fmt.Errorf("workspace: diff: %w", err)
	}
	return patch.String(), nil
}

// treeBuilder turns index entries into stored tree objects; keys of trees
// are directory paths, "." for the root.
type treeBuilder struct {
	repo  *git.Repository
	trees map[string]*object.Tree
}

// add places entry at name, creating the directories above it.
func (b *treeBuilder) add(name string, entry object.TreeEntry) {
	dir := path.Dir(name)
	if _, ok := b.trees[dir]; !ok {
		b.trees[dir] = &object.Tree{}
		b.add(dir, object.TreeEntry{Name: path.Base(dir), Mode: filemode.Dir})
	}
	b.trees[dir].Entries = append(b.trees[dir].Entries, entry)
}

// store writes the tree of dir and its subtrees and returns its hash.
func (b *treeBuilder) store(dir string) (plumbing.Hash, error) {
	t := b.trees[dir]
	for i, e := range t.Entries {
		if e.Mode == filemode.Dir {
			h, err := b.store(path.Join(dir, e.Name))
			if err != nil {
				return plumbing.ZeroHash, err
			}
			t.Entries[i].Hash = h
		}
	}
	// git orders tree entries by name, with directories compared as "name/".
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(t.Entries, func(i, j int) bool { return key(t.Entries[i]) < key(t.Entries[j]) })
	o := b.repo.Storer.NewEncodedObject()
	if err := t.Encode(o); err != nil {
		return plumbing.ZeroHash, err
	}
	if b.repo.Storer.HasEncodedObject(o.Hash()) == nil {
		return o.Hash(), nil
	}
	return b.repo.Storer.SetEncodedObject(o)
}
