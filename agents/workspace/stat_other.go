//go:build !linux

package workspace

import (
	"io/fs"

	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// keyOf returns the parts of fi that change when the file is written or
// chmod-ed: size, mtime and mode (ctime and inode are read on Linux only).
func keyOf(fi fs.FileInfo) statKey {
	return statKey{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: fi.Mode()}
}

// fillStat copies fi's size and mtime into an index entry.
func fillStat(e *index.Entry, fi fs.FileInfo) {
	e.ModifiedAt = fi.ModTime()
	e.Size = uint32(fi.Size())
}
