package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/statgraph/statgraph/internal/fsutil"
)

// publish.go publishes a task branch into the source in this process, in
// the order git itself writes, so that a kill at any moment leaves the
// source consistent: first the objects the source lacks, as one pack
// written under a temporary name, fsynced and renamed, with its index
// renamed last (see writePackNamed); then the branch, under git's lock-file
// protocol (<ref>.lock created exclusively, the new value written and
// fsynced, renamed over the ref, the directory fsynced). No git process is
// started, and the cost does not grow with the number of branches the
// source has (git fetch lists them all). The branch's reflog gets an entry
// as git writes one (reflog.go).

// publish moves the task branch in the source to tip, writing the objects
// it needs first, under the source's shared lock; then it merges
// statgraph's packs in the source when they are many (repack.go). It
// applies Finish's rules (see Finish). A failed merge is not the publish's
// failure: it leaves the source readable, and the next publish merges.
func (w *Workspace) publish(ctx context.Context, tip plumbing.Hash) error {
	release := holdSource(w.source)
	err := w.publishHeld(ctx, tip)
	release()
	if err != nil {
		return err
	}
	if _, common, err := sourceGitDirs(w.source); err == nil {
		_ = repackOwn(common)
	}
	return nil
}

// publishHeld is publish with the source's shared lock held.
func (w *Workspace) publishHeld(ctx context.Context, tip plumbing.Hash) error {
	gitDir, common, err := sourceGitDirs(w.source)
	if err != nil {
		return err
	}
	if err := w.refuseCheckedOut(gitDir, common); err != nil {
		return err
	}
	src, err := openSource(w.source)
	if err != nil {
		return err
	}
	old := plumbing.ZeroHash
	if ref, err := src.Storer.Reference(w.branch); err == nil && ref.Type() == plumbing.HashReference {
		old = ref.Hash()
	}
	if !old.IsZero() && old != tip && readableCommit(src, old) {
		ok, err := w.isAncestor(old, tip)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w (%s in %s is not an ancestor of the workspace's commit %s); rename or delete that branch and call Finish again",
				ErrDiverged, w.branch.Short(), w.source, tip)
		}
	}
	// A branch at a commit the source cannot read (an older, not
	// crash-safe publish) is replaced: its old value is not an ancestor
	// anyone can check, and the objects written now make tip readable.
	objs, err := missingObjects(ctx, w.repo, w.dir, src, tip)
	if err != nil {
		return err
	}
	if len(objs) > 0 {
		name, err := writePackNamed(filepath.Join(common, "objects", "pack"), objs, storeSource(w.repo, w.dir))
		if err != nil {
			return fmt.Errorf("workspace: publish %s into %s: write its objects: %w", w.branch.Short(), w.source, err)
		}
		if err := recordPack(common, name); err != nil {
			return fmt.Errorf("workspace: publish %s into %s: record its pack in %s: %w", w.branch.Short(), w.source, ownPacksFile, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if old != tip {
		if err := w.moveRef(ctx, src, common, old, tip); err != nil {
			return err
		}
	}
	// Read the branch back (the object reads were checked as they were
	// walked: what the source lacked is in the pack just written).
	got := "no such branch"
	if ref, err := src.Storer.Reference(w.branch); err == nil {
		got = ref.Hash().String()
	}
	if got != tip.String() {
		return fmt.Errorf("%w: %s in %s is at %s, not at the workspace's commit %s; call Finish to publish it",
			ErrNotPublished, w.branch.Short(), w.source, got, tip)
	}
	return nil
}

// sourceGitDirs returns the source's git directory and the common git
// directory it shares with its worktrees (the same for a plain repository),
// where objects and branches live.
func sourceGitDirs(source string) (gitDir, common string, err error) {
	gitDir = filepath.Join(source, git.GitDirName)
	fi, err := os.Stat(gitDir)
	if err != nil {
		return "", "", fmt.Errorf("%w: %s: %w", ErrNotRepository, source, err)
	}
	if !fi.IsDir() { // a worktree's .git file: "gitdir: <path>"
		b, err := os.ReadFile(gitDir)
		if err != nil {
			return "", "", fmt.Errorf("%w: %s: %w", ErrNotRepository, source, err)
		}
		p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
		if !ok {
			return "", "", fmt.Errorf("%w: %s is not a gitdir file", ErrNotRepository, gitDir)
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(source, p)
		}
		gitDir = p
	}
	common = gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = filepath.Clean(c)
	}
	return gitDir, common, nil
}

// refuseCheckedOut fails with ErrBranchCheckedOut when the source or one of
// its worktrees has the task branch checked out (its HEAD names it).
func (w *Workspace) refuseCheckedOut(gitDir, common string) error {
	return refuseCheckedOut(w.source, gitDir, common, w.branch, "call Finish again")
}

// refuseCheckedOut fails with ErrBranchCheckedOut when the source or one of
// its worktrees has branch checked out; then says what to do next.
func refuseCheckedOut(source, gitDir, common string, branch plumbing.ReferenceName, then string) error {
	heads := []string{filepath.Join(gitDir, "HEAD"), filepath.Join(common, "HEAD")}
	if ents, err := os.ReadDir(filepath.Join(common, "worktrees")); err == nil {
		for _, e := range ents {
			heads = append(heads, filepath.Join(common, "worktrees", e.Name(), "HEAD"))
		}
	}
	want := "ref: " + branch.String()
	for _, h := range heads {
		if b, err := os.ReadFile(h); err == nil && strings.TrimSpace(string(b)) == want {
			return fmt.Errorf("%w: %s has %s checked out; switch it to another branch and %s", ErrBranchCheckedOut, source, branch.Short(), then)
		}
	}
	return nil
}

// readableCommit reports whether src has commit h and its tree.
func readableCommit(src *git.Repository, h plumbing.Hash) bool {
	c, err := object.GetCommit(src.Storer, h)
	return err == nil && src.Storer.HasEncodedObject(c.TreeHash) == nil
}

// isAncestor reports whether commit old is tip or one of its ancestors, in
// the workspace (which has all of tip's history).
func (w *Workspace) isAncestor(old, tip plumbing.Hash) (bool, error) {
	seen := map[plumbing.Hash]bool{tip: true}
	todo := []plumbing.Hash{tip}
	for len(todo) > 0 {
		h := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if h == old {
			return true, nil
		}
		c, err := object.GetCommit(w.repo.Storer, h)
		if err != nil {
			return false, fmt.Errorf("workspace: %s: read commit %s: %w", w.dir, h, err)
		}
		for _, p := range c.ParentHashes {
			if !seen[p] {
				seen[p] = true
				todo = append(todo, p)
			}
		}
	}
	return false, nil
}

// missingObjects returns the hashes of the objects reachable from tip that the source
// src does not have, read from the repository from (the workspace, at
// fromDir, which names it in errors). An object the source has is
// taken to come with everything it reaches (git's own assumption for a
// repository that passes fsck), so the walk stops there: it costs what the
// task added, not the size of the history or the tree.
func missingObjects(ctx context.Context, from *git.Repository, fromDir string, src *git.Repository, tip plumbing.Hash) ([]plumbing.Hash, error) {
	var out []plumbing.Hash
	seen := map[plumbing.Hash]bool{}
	has := func(h plumbing.Hash) bool { return src.Storer.HasEncodedObject(h) == nil }
	add := func(h plumbing.Hash) error {
		if err := from.Storer.HasEncodedObject(h); err != nil {
			return fmt.Errorf("workspace: %s: read object %s: %w", fromDir, h, err)
		}
		out = append(out, h)
		return nil
	}
	var walkTree func(h plumbing.Hash) error
	walkTree = func(h plumbing.Hash) error {
		if seen[h] || has(h) {
			return nil
		}
		seen[h] = true
		if err := add(h); err != nil {
			return err
		}
		t, err := object.GetTree(from.Storer, h)
		if err != nil {
			return fmt.Errorf("workspace: %s: read tree %s: %w", fromDir, h, err)
		}
		for _, e := range t.Entries {
			switch e.Mode {
			case filemode.Submodule: // a commit of another repository
			case filemode.Dir:
				if err := walkTree(e.Hash); err != nil {
					return err
				}
			default:
				if !seen[e.Hash] && !has(e.Hash) {
					seen[e.Hash] = true
					if err := add(e.Hash); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	todo := []plumbing.Hash{tip}
	for len(todo) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[h] || (has(h) && readableCommit(src, h)) {
			continue
		}
		seen[h] = true
		c, err := object.GetCommit(from.Storer, h)
		if err != nil {
			return nil, fmt.Errorf("workspace: %s: read commit %s: %w", fromDir, h, err)
		}
		if !has(h) {
			if err := add(h); err != nil {
				return nil, err
			}
		}
		if err := walkTree(c.TreeHash); err != nil {
			return nil, err
		}
		todo = append(todo, c.ParentHashes...)
	}
	return out, nil
}

// repairOrphanPacks writes the missing index of every pack in dir
// (objects/pack) that has none: a publish (statgraph's or git's own fetch)
// killed between renaming a pack and its index leaves one. git ignores such
// a pack, but go-git refuses to read any object of the repository while one
// is there, so Prepare and Finish would fail on the source from then on. A
// pack gets its final name only once complete, so its index can be rebuilt
// from it; a git that renames its own index meanwhile writes the same
// objects' index, and either rename leaves a valid one.
func repairOrphanPacks(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	have := make(map[string]bool, len(ents))
	for _, e := range ents {
		have[e.Name()] = true
	}
	repaired := false
	for _, e := range ents {
		base, ok := strings.CutSuffix(e.Name(), ".pack")
		if !ok || !strings.HasPrefix(base, "pack-") || have[base+".idx"] {
			continue
		}
		idx, err := indexPack(filepath.Join(dir, e.Name()))
		if err != nil {
			return fmt.Errorf("%s has no index and cannot be indexed (%w); run git index-pack on it, or remove it if git fsck passes without it", filepath.Join(dir, e.Name()), err)
		}
		tmp, err := writeTemp(dir, "tmp_idx_", idx)
		if err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Join(dir, base+".idx")); err != nil {
			os.Remove(tmp)
			return err
		}
		repaired = true
	}
	if repaired {
		return fsutil.SyncDir(dir)
	}
	return nil
}

// indexPack reads the pack at path and returns its index (version 2).
func indexPack(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	iw := new(idxfile.Writer)
	p, err := packfile.NewParser(packfile.NewScanner(f), iw)
	if err != nil {
		return nil, err
	}
	if _, err := p.Parse(); err != nil {
		return nil, err
	}
	return encodeIndex(iw)
}

// moveRef moves the task branch in the source (common git directory
// common) from old (zero: it did not exist) to tip under git's lock-file
// protocol. A lock left by a killed process is removed once it has not
// changed for refLockSettle (see removeStaleLock); a branch that moved
// meanwhile is an error, and nothing is changed.
func (w *Workspace) moveRef(ctx context.Context, src *git.Repository, common string, old, tip plumbing.Hash) error {
	path := filepath.Join(common, filepath.FromSlash(w.branch.String()))
	lock := path + ".lock"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("workspace: publish %s into %s: %w", w.branch.Short(), w.source, err)
	}
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		if err := w.removeStaleLock(ctx, w.branch.String(), refLockSettle); err != nil {
			return err
		}
		f, err = os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	}
	if err != nil {
		return fmt.Errorf("workspace: publish %s into %s: take the lock %s: %w", w.branch.Short(), w.source, lock, err)
	}
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(lock)
		}
	}()
	// Under the lock, the branch must still be where it was read (go-git
	// reads a ref from disk on every call).
	now := plumbing.ZeroHash
	if ref, err := src.Storer.Reference(w.branch); err == nil {
		now = ref.Hash()
	}
	if now != old {
		return fmt.Errorf("workspace: publish %s into %s: the branch moved from %s to %s meanwhile; call Finish again", w.branch.Short(), w.source, old, now)
	}
	if _, err := f.WriteString(tip.String() + "\n"); err != nil {
		return fmt.Errorf("workspace: publish %s into %s: %w", w.branch.Short(), w.source, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("workspace: publish %s into %s: %w", w.branch.Short(), w.source, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("workspace: publish %s into %s: %w", w.branch.Short(), w.source, err)
	}
	if wantsReflog(src) {
		msg := "statgraph: publish task " + w.taskID
		// A branch at a commit the source cannot read is replaced as if
		// new: git fsck rejects a reflog entry naming a missing object.
		logOld := old
		if !old.IsZero() && !readableCommit(src, old) {
			logOld = plumbing.ZeroHash
		}
		if err := appendReflog(common, w.branch, logOld, tip, w.name, w.email, msg, time.Now()); err != nil {
			return fmt.Errorf("workspace: publish %s into %s: write its reflog: %w; check that %s is writable", w.branch.Short(), w.source, err,
				filepath.Join(common, "logs"))
		}
	}
	if err := os.Rename(lock, path); err != nil {
		return fmt.Errorf("workspace: publish %s into %s: %w", w.branch.Short(), w.source, err)
	}
	done = true
	return fsutil.SyncDir(filepath.Dir(path))
}
