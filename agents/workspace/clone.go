package workspace

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// openSource opens the user's repository read-only in spirit: nothing here
// writes to it.
func openSource(source string) (*git.Repository, error) {
	repo, err := git.PlainOpenWithOptions(source, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return nil, fmt.Errorf("workspace: open source repository %s: %w; Source must be the top directory of a git repository", source, err)
	}
	return repo, nil
}

// resolveBase turns Options.Base (or the source's HEAD when empty) into a
// commit hash.
func resolveBase(src *git.Repository, source, base string) (plumbing.Hash, error) {
	if base == "" {
		head, err := src.Head()
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("workspace: source %s has no HEAD commit: %w; commit something first or set Options.Base", source, err)
		}
		return head.Hash(), nil
	}
	h, err := src.ResolveRevision(plumbing.Revision(base))
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("workspace: base %q in %s: %w; give a branch, tag or commit hash of the source", base, source, err)
	}
	if _, err := src.CommitObject(*h); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("workspace: base %q in %s is not a commit: %w", base, source, err)
	}
	return *h, nil
}

// sourceGitDir returns the directory holding the source's objects: .git, or
// for a linked worktree (.git is a "gitdir: ..." file) its common directory.
func sourceGitDir(source string) (string, error) {
	dotgit := filepath.Join(source, git.GitDirName)
	fi, err := os.Stat(dotgit)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	if fi.IsDir() {
		return dotgit, nil
	}
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return "", fmt.Errorf("workspace: %s is neither a directory nor a \"gitdir:\" file", dotgit)
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(source, gitdir)
	}
	if c, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitdir, common)
		}
		return common, nil
	}
	return gitdir, nil
}

// linkObjects shares the object database of srcGit with dstGit: every file
// under objects/ is hard-linked (object files are immutable, so the two
// repositories cannot disturb each other; new objects of either side land in
// new files), or copied where the file system refuses links. A shallow
// source's shallow file is copied along. The directories are linked in
// parallel, since creating them and linking are waits on the file system,
// not work for the CPU. Files that vanish while walking (a concurrent git
// gc) are skipped; the caller checks the base is readable.
func linkObjects(ctx context.Context, srcGit, dstGit string) error {
	src := filepath.Join(srcGit, "objects")
	dst := filepath.Join(dstGit, "objects")
	dirs, err := os.ReadDir(src)
	if err != nil {
		return fmt.Errorf("workspace: share objects of %s: %w", srcGit, err)
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex // guards firstErr
		firstErr error
	)
	sem := make(chan struct{}, linkWorkers)
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := linkTree(ctx, filepath.Join(src, d.Name()), filepath.Join(dst, d.Name())); err != nil {
				mu.Lock()
				firstErr = cmp.Or(firstErr, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return fmt.Errorf("workspace: share objects of %s: %w", srcGit, firstErr)
	}
	if err := linkOrCopy(filepath.Join(srcGit, "shallow"), filepath.Join(dstGit, "shallow")); err != nil {
		return fmt.Errorf("workspace: copy shallow file of %s: %w", srcGit, err)
	}
	return nil
}

// linkWorkers bounds the directories linkObjects works on at once.
const linkWorkers = 16

// linkTree links or copies every regular file under src to the same place
// under dst, creating directories.
func linkTree(ctx context.Context, src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case !d.Type().IsRegular():
			return nil
		}
		return linkOrCopy(p, target)
	})
}

// linkOrCopy hard-links src to dst, copying when linking fails; a missing
// src is not an error.
func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil || errors.Is(err, fs.ErrExist) {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// makeRoot creates the directory holding workspaces and, the first time, a
// .gitignore of "*" in it so the workspaces do not show in the source's git
// status when Root lies inside the source's working tree.
func makeRoot(root string) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("workspace: create root %s: %w", root, err)
	}
	f, err := os.OpenFile(filepath.Join(root, ".gitignore"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	if _, err := f.WriteString("*\n"); err != nil {
		f.Close()
		return fmt.Errorf("workspace: %w", err)
	}
	return f.Close()
}
