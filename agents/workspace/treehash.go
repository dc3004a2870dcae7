package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
)

// TreeHash returns a hex SHA-256 over the working tree as it is on disk,
// uncommitted changes included: every path in lexical order with its kind
// (directory, file, executable file, symbolic link) and, for files and
// links, the SHA-256 of the content or link target. .git directories are
// left out; ignored files and empty directories are included, since they
// can change what a test sees. Equal trees give equal hashes on any
// machine, so the result can key a cache of verifier results.
//
// TreeHash shares Commit's stat cache: it reads only the files whose stat
// changed since the workspace last looked at them (or that were racy then),
// so after a Commit of the same tree it reads no file at all. It takes the
// workspace's lock, so it waits for a running Commit, Diff or Reset; it
// works after Close. Files that vanish while it walks are left out.
//
// Designs turned down: the git tree hash of the commit is not used because
// it leaves out ignored files and empty directories and rests on SHA-1; a
// per-file digest instead of streaming all content into one hash is what
// lets unchanged files be skipped.
func (w *Workspace) TreeHash() (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	stamp, err := scanStamp(filepath.Join(w.dir, git.GitDirName))
	if err != nil {
		return "", fmt.Errorf("workspace: hash %s: %w", w.dir, err)
	}
	t := &treeHasher{st: &w.scan.stat, root: w.dir, stamp: stamp, h: sha256.New(), seen: map[string]bool{}, max: w.limits.fileBytes}
	if err := t.dir(""); err != nil {
		return "", fmt.Errorf("workspace: hash %s: %w", w.dir, err)
	}
	w.scan.stat.forget(t.seen)
	return hex.EncodeToString(t.h.Sum(nil)), nil
}

// treeHasher is one TreeHash walk.
type treeHasher struct {
	st    *statCache
	root  string
	stamp int64
	h     hash.Hash
	seen  map[string]bool // files visited, to prune the cache
	max   int64           // files larger are hashed as streams
}

// dir feeds the entries under rel to the hash, each as: kind byte, path,
// NUL, then for files and links the SHA-256 of the content or target.
func (t *treeHasher) dir(rel string) error {
	abs := filepath.Join(t.root, filepath.FromSlash(rel))
	des, err := os.ReadDir(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, de := range des {
		name := de.Name()
		if strings.EqualFold(name, git.GitDirName) {
			continue
		}
		fi, err := de.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		p := path.Join(rel, name)
		kind := ""
		switch mode := fi.Mode(); {
		case mode.IsDir():
			io.WriteString(t.h, "d"+p+"\x00")
			if err := t.dir(p); err != nil {
				return err
			}
			continue
		case mode&fs.ModeSymlink != 0:
			kind = "l"
		case mode.IsRegular() && mode&0o111 != 0:
			kind = "x"
		case mode.IsRegular():
			kind = "f"
		default:
			continue
		}
		e := t.st.lookup(p, fi)
		if e == nil {
			if e, _, err = t.st.hash(filepath.Join(abs, name), p, fi, t.stamp, t.max); errors.Is(err, fs.ErrNotExist) {
				continue
			} else if err != nil {
				return err
			}
		}
		t.seen[p] = true
		io.WriteString(t.h, kind+p+"\x00")
		t.h.Write(e.sum[:])
	}
	return nil
}
