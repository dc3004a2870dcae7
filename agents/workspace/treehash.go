package workspace

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// TreeHash returns a hex SHA-256 over the working tree as it is on disk,
// uncommitted changes included: every path (in lexical order), its kind,
// executable bit, and content or link target. .git directories are left
// out; ignored files are included, since they can change what a test sees.
// Equal trees give equal hashes on any machine, so the result can key a
// cache of verifier results. It reads every file, without taking the git
// lock; a tree changing while it runs gives a hash of some mix of states.
func (w *Workspace) TreeHash() (string, error) {
	h := sha256.New()
	buf := make([]byte, 64<<10)
	err := filepath.WalkDir(w.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(w.dir, p)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		if strings.EqualFold(d.Name(), ".git") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		return hashEntry(h, p, filepath.ToSlash(rel), d, buf)
	})
	if err != nil {
		return "", fmt.Errorf("workspace: hash %s: %w", w.dir, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashEntry feeds one entry to h as: kind byte, path, NUL, 8-byte length,
// payload (content for files, target for links, nothing for directories).
func hashEntry(h hash.Hash, p, rel string, d fs.DirEntry, buf []byte) error {
	var n [8]byte
	switch t := d.Type(); {
	case d.IsDir():
		io.WriteString(h, "d"+rel+"\x00")
	case t&fs.ModeSymlink != 0:
		target, err := os.Readlink(p)
		if err != nil {
			return err
		}
		io.WriteString(h, "l"+rel+"\x00")
		binary.BigEndian.PutUint64(n[:], uint64(len(target)))
		h.Write(n[:])
		io.WriteString(h, target)
	case t.IsRegular():
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		kind := "f"
		if fi.Mode()&0o111 != 0 {
			kind = "x"
		}
		io.WriteString(h, kind+rel+"\x00")
		binary.BigEndian.PutUint64(n[:], uint64(fi.Size()))
		h.Write(n[:])
		if _, err := io.CopyBuffer(h, io.LimitReader(f, fi.Size()), buf); err != nil {
			return err
		}
	}
	return nil
}
