package workspace

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// checkout writes the files of commit base into the new, empty working
// tree dir of repo and the index for them, and fills w.scan with what it
// wrote, so the first Commit or TreeHash reads no file. It moves no ref
// (go-git's Reset would write the branch as a loose ref, three new inodes).
//
// The stat cache is filled after all files are written, with a stamp taken
// then: nothing else writes in the temporary directory before Prepare
// returns, so a later change gets an mtime at or after the stamp and is
// seen, and files written in the stamp's own tick are racy as usual.
func (w *Workspace) checkout(ctx context.Context, repo *git.Repository, dir string, base plumbing.Hash) error {
	commit, err := repo.CommitObject(base)
	if err != nil {
		return fmt.Errorf("workspace: check out %s: %w", base, err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return fmt.Errorf("workspace: check out %s: %w", base, err)
	}
	type written struct {
		path string
		mode filemode.FileMode
		blob plumbing.Hash
		sum  [32]byte
	}
	var files []written
	dirs := map[string]bool{".": true}
	mkdirs := func(d string) error {
		if dirs[d] {
			return nil
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755); err != nil {
			return err
		}
		for ; !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
		return nil
	}
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		name, entry, err := walker.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("workspace: check out %s: %w", base, err)
		}
		var sum [32]byte
		switch entry.Mode {
		case filemode.Dir:
			continue
		case filemode.Submodule:
			// As git does for a submodule not initialised: an empty directory.
			err = mkdirs(name)
		default:
			if err = mkdirs(path.Dir(name)); err == nil {
				sum, err = writeBlob(repo, filepath.Join(dir, filepath.FromSlash(name)), entry)
			}
		}
		if err != nil {
			return fmt.Errorf("workspace: check out %s: %s: %w", base, name, err)
		}
		files = append(files, written{path: name, mode: entry.Mode, blob: entry.Hash, sum: sum})
	}
	stamp, err := scanStamp(filepath.Join(dir, git.GitDirName))
	if err != nil {
		return fmt.Errorf("workspace: check out %s: %w", base, err)
	}
	st := scanState{stat: statCache{files: make(map[string]*fileEntry, len(files))}}
	recorded := make([]scanned, len(files))
	for i, f := range files {
		fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(f.path)))
		if err != nil {
			return fmt.Errorf("workspace: check out %s: %w", base, err)
		}
		key := keyOf(fi)
		racy := key.mtime >= stamp
		if f.mode != filemode.Submodule {
			st.stat.files[f.path] = &fileEntry{key: key, blob: f.blob, committed: f.blob, sum: f.sum, stored: true, racy: racy}
		}
		recorded[i] = scanned{path: f.path, mode: f.mode, blob: f.blob, info: fi, racy: racy}
	}
	st.commit, st.commitTree = base, commit.TreeHash
	if err := st.syncIndex(repo.Storer, commit.TreeHash, recorded); err != nil {
		return fmt.Errorf("workspace: write index of %s: %w", dir, err)
	}
	w.scan = st
	return nil
}

// writeBlob creates the file (or symbolic link) p with the content and mode
// of the tree entry e and returns the SHA-256 of the content. The content
// is streamed (see largeObject), whatever its size.
func writeBlob(repo *git.Repository, p string, e object.TreeEntry) (sum [32]byte, err error) {
	blob, err := repo.BlobObject(e.Hash)
	if err != nil {
		return sum, err
	}
	r, err := blob.Reader()
	if err != nil {
		return sum, err
	}
	defer r.Close()
	h := sha256.New()
	if e.Mode == filemode.Symlink {
		target, err := io.ReadAll(io.LimitReader(r, 4096))
		if err != nil {
			return sum, err
		}
		h.Write(target)
		copy(sum[:], h.Sum(nil))
		return sum, os.Symlink(string(target), p)
	}
	perm := os.FileMode(0o644)
	if e.Mode == filemode.Executable {
		perm = 0o755
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return sum, err
	}
	if _, err := io.Copy(io.MultiWriter(f, h), r); err != nil {
		f.Close()
		return sum, err
	}
	copy(sum[:], h.Sum(nil))
	return sum, f.Close()
}
