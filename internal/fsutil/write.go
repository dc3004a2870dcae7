package fsutil

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile replaces the file at path with data so that a reader sees
// either the old content or the new one, never a part, and so that the
// new content and its name survive a crash once WriteFile returns: data
// goes to a temporary file in the same directory, which is fsynced,
// renamed over path, and the directory fsynced.
//
// An existing file keeps its permission bits; a new one gets perm (not
// reduced by the umask). A symbolic link at path is replaced by the file,
// not followed: a caller that wants the link's target replaced resolves
// it first (filepath.EvalSymlinks).
//
// The temporary file is named ".<base of path>.tmp-<random>"; a process
// killed during WriteFile leaves it behind, for the caller to remove when
// it knows no other write runs. On failure path is unchanged and the
// temporary file removed. WriteFile is safe to call concurrently for one
// path: the last rename wins.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return replace(path, data, perm, true)
}

// WriteCache replaces the file at path with data as WriteFile does, a
// reader seeing the old content or the new, but without fsyncs: after a
// power loss the file may hold either, or be empty. It is for caches,
// whose entries are checked when read and whose loss costs only the work
// of making them again; an fsync costs milliseconds per file (6.5 ms
// against 0.25 ms for a 20 KiB file on ext4, a virtual disk).
func WriteCache(path string, data []byte, perm fs.FileMode) error {
	return replace(path, data, perm, false)
}

// WriteFileIf is WriteFile for a file another program may write without
// taking any lock (a person's editor): once the new content is written and
// fsynced beside path, and just before the rename, it calls unchanged,
// which reads path again and reports whether it still holds what the
// caller read. When it does not (or fails), path is left alone, the
// temporary file removed, and WriteFileIf returns false (with unchanged's
// error). Checking after the slow part leaves only the rename itself as a
// window in which the other program's write can be lost.
func WriteFileIf(path string, data []byte, perm fs.FileMode, unchanged func() (bool, error)) (bool, error) {
	err := replaceIf(path, data, perm, true, unchanged)
	if errors.Is(err, errChanged) {
		return false, nil
	}
	return err == nil, err
}

// errChanged is replaceIf's report that unchanged said no.
var errChanged = errors.New("file changed")

// replace is WriteFile with the fsyncs only when durable is set.
func replace(path string, data []byte, perm fs.FileMode, durable bool) error {
	return replaceIf(path, data, perm, durable, nil)
}

// replaceIf is replace, renaming only when unchanged (if given) says yes.
func replaceIf(path string, data []byte, perm fs.FileMode, durable bool, unchanged func() (bool, error)) error {
	if st, err := os.Lstat(path); err == nil && st.Mode().IsRegular() {
		perm = st.Mode().Perm()
	}
	tmp, err := writeTemp(path, data, perm, durable)
	if err != nil {
		return err
	}
	if unchanged != nil {
		ok, err := unchanged()
		if err == nil && !ok {
			err = errChanged
		}
		if err != nil {
			os.Remove(tmp)
			return err
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	if !durable {
		return nil
	}
	return SyncDir(filepath.Dir(path))
}

// WriteNew creates the file path holding data, failing with an error
// wrapping fs.ErrExist when path exists (a symbolic link, even a dangling
// one, counts), so that of two writers the first wins. As with WriteFile
// a reader never sees part of data: the complete, fsynced temporary file
// is hard-linked to path, and the directory fsynced. The file gets perm
// (not reduced by the umask). The file system must support hard links.
func WriteNew(path string, data []byte, perm fs.FileMode) error {
	tmp, err := writeTemp(path, data, perm, true)
	if err != nil {
		return err
	}
	err = os.Link(tmp, path)
	os.Remove(tmp)
	if err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// writeTemp writes data to a new file with mode perm beside path, named
// after it, fsynced when durable is set, and returns its name.
func writeTemp(path string, data []byte, perm fs.FileMode, durable bool) (name string, err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return "", err
	}
	if err = f.Chmod(perm); err != nil {
		return "", err
	}
	if durable {
		if err = f.Sync(); err != nil {
			return "", err
		}
	}
	if err = f.Close(); err != nil {
		return "", err
	}
	return f.Name(), nil
}

// SyncDir fsyncs the directory dir, making the names created, renamed or
// removed in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
