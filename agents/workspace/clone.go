package workspace

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/statgraph/statgraph/internal/fsutil"
)

// openSource opens the user's repository read-only in spirit: nothing here
// writes to it.
func openSource(source string) (*git.Repository, error) {
	// A pack left without its index by a killed publish makes go-git
	// refuse every object read: index it first (see repairOrphanPacks).
	if _, common, err := sourceGitDirs(source); err == nil {
		if err := repairOrphanPacks(filepath.Join(common, "objects", "pack")); err != nil {
			return nil, fmt.Errorf("workspace: source repository %s: %w", source, err)
		}
	}
	repo, _, err := openRepo(source, false)
	if err != nil {
		return nil, fmt.Errorf("%w: open source repository %s: %w; Source must be the top directory of a git repository", ErrNotRepository, source, err)
	}
	return repo, nil
}

// resolveBase turns Options.Base (or the source's HEAD when empty) into a
// commit hash.
func resolveBase(src *git.Repository, source, base string) (plumbing.Hash, error) {
	if base == "" {
		head, err := src.Head()
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("%w: source %s has no HEAD commit (%v); commit something first or set Options.Base", ErrNoCommit, source, err)
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

// shareObjects gives the new repository at dstGit (renamed to finalGit once
// built), not opened yet, the
// objects of the source src (at srcGit). Every file under objects/ is hard-linked (object
// files are immutable, so the two repositories cannot disturb each other;
// new objects of either side land in new files), or copied where the file
// system refuses links. A shallow source's shallow file is copied along.
//
// Loose objects that are few and small but spread over several fan-out
// directories are instead written into one new pack: making a directory
// costs more than compressing a few KiB (on the 2-core machines measured, a
// new inode costs 0.1-1 ms, a hard link 10 us), and a small repository's
// handful of objects otherwise needs a directory each. That pack is built
// once per set of loose objects and linked into later workspaces (see
// sharePacked). Files that vanish
// while walking (a concurrent git gc) are skipped, and a failed pack falls
// back to links; the caller checks the base is readable.
func shareObjects(ctx context.Context, src *git.Repository, srcGit, dstGit, finalGit string) error {
	objects := filepath.Join(srcGit, "objects")
	entries, err := os.ReadDir(objects)
	if err != nil {
		return fmt.Errorf("workspace: share objects of %s: %w", srcGit, err)
	}
	var fanout, other []string
	for _, e := range entries {
		switch {
		case !e.IsDir():
		case isFanout(e.Name()):
			fanout = append(fanout, e.Name())
		default:
			other = append(other, e.Name())
		}
	}
	if len(fanout) >= packMinDirs {
		if loose, ok := smallLoose(objects, fanout); ok && sharePacked(src, objects, dstGit, finalGit, loose) == nil {
			fanout = nil
		}
	}
	if err := linkDirs(ctx, objects, filepath.Join(dstGit, "objects"), append(other, fanout...)); err != nil {
		return fmt.Errorf("workspace: share objects of %s: %w", srcGit, err)
	}
	if err := linkOrCopy(filepath.Join(srcGit, "shallow"), filepath.Join(dstGit, "shallow")); err != nil {
		return fmt.Errorf("workspace: copy shallow file of %s: %w", srcGit, err)
	}
	return nil
}

// Limits of packing loose objects instead of linking them: at least
// packMinDirs fan-out directories (a pack costs two new files and the
// objects/pack directory), at most packMaxObjects objects of packMaxBytes
// compressed in all (compressing them again stays well under a
// millisecond per directory saved).
const (
	packMinDirs    = 4
	packMaxObjects = 256
	packMaxBytes   = 256 << 10
)

// isFanout reports whether name is a loose-object directory ("00".."ff").
func isFanout(name string) bool {
	const hex = "0123456789abcdef"
	return len(name) == 2 && strings.IndexByte(hex, name[0]) >= 0 && strings.IndexByte(hex, name[1]) >= 0
}

// smallLoose lists the loose objects under the fan-out directories of
// objects, or reports false when they are over the packing limits or
// cannot be listed.
func smallLoose(objects string, fanout []string) ([]plumbing.Hash, bool) {
	var (
		hashes []plumbing.Hash
		size   int64
	)
	for _, d := range fanout {
		files, err := os.ReadDir(filepath.Join(objects, d))
		if err != nil {
			return nil, false
		}
		for _, f := range files {
			fi, err := f.Info()
			if err != nil || !fi.Mode().IsRegular() || len(f.Name()) != 38 {
				return nil, false
			}
			h := plumbing.NewHash(d + f.Name())
			if h.IsZero() {
				return nil, false
			}
			size += fi.Size()
			if hashes = append(hashes, h); len(hashes) > packMaxObjects || size > packMaxBytes {
				return nil, false
			}
		}
	}
	return hashes, true
}

// buildPack encodes the objects hashes of src as one pack (see encodePack)
// in memory (a few hundred KiB at most, see packMaxBytes).
func buildPack(src *git.Repository, hashes []plumbing.Hash) (pack, idx []byte, name string, err error) {
	var buf bytes.Buffer
	sum, idx, err := encodePack(&buf, hashes, storeSource(src, "the source"))
	if err != nil {
		return nil, nil, "", err
	}
	return buf.Bytes(), idx, "pack-" + sum.String(), nil
}

// linkDirs links or copies the directories names of src to dst, several
// at once, since creating directories and linking are waits on the file
// system, not work for the CPU.
func linkDirs(ctx context.Context, src, dst string, names []string) error {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex // guards firstErr
		firstErr error
	)
	sem := make(chan struct{}, linkWorkers)
	for _, name := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := linkTree(ctx, filepath.Join(src, name), filepath.Join(dst, name)); err != nil {
				mu.Lock()
				firstErr = cmp.Or(firstErr, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// linkWorkers bounds the directories linkDirs works on at once.
const linkWorkers = 16

// linkTree links or copies every regular file under src to the same place
// under dst, creating the directories that receive a file (an empty one,
// such as objects/info in most repositories, costs an inode for nothing).
func linkTree(ctx context.Context, src, dst string) error {
	made := ""
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
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		idx := ""
		if stem, ok := strings.CutSuffix(p, ".pack"); ok {
			// A pack goes with its index or not at all: a publish renames
			// its pack into place before its index, and go-git refuses a
			// repository holding a pack without one. A pack whose index is
			// not there yet is a publish in flight, whose objects this
			// workspace does not need (its refs are not updated yet).
			idx = stem + ".idx"
			if _, err := os.Lstat(idx); err != nil {
				return nil
			}
		}
		if dir := filepath.Dir(target); dir != made {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			made = dir
		}
		if err := linkOrCopy(p, target); err != nil || idx == "" {
			return err
		}
		return linkOrCopy(idx, strings.TrimSuffix(target, ".pack")+".idx") // again when the walk reaches it: a no-op
	})
}

// linkOrCopy hard-links src to dst, copying when linking fails
// (fsutil.CopyFile, which refuses links); a missing src is not an error.
func linkOrCopy(src, dst string) error {
	err := os.Link(src, dst)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return nil
	}
	err = fsutil.CopyFile(src, dst, 0o444)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
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

// CheckSource reports whether dir can be the source of workspaces: the top
// directory of a git repository with a HEAD commit. It returns the HEAD
// commit's hash, or an error saying what to do. It changes nothing.
func CheckSource(dir string) (string, error) {
	defer holdSource(dir)()
	src, err := openSource(dir)
	if err != nil {
		return "", err
	}
	h, err := resolveBase(src, dir, "")
	if err != nil {
		return "", err
	}
	return h.String(), nil
}
