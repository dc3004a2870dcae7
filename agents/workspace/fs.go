package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// defaultMaxFileSize is the size cap when FSOptions.MaxFileSize is zero.
const defaultMaxFileSize = 1 << 20

// binarySniff is how many leading bytes are checked for a NUL byte.
const binarySniff = 8 << 10

// maxSymlinkHops bounds symbolic link resolution, as the kernel does (ELOOP).
const maxSymlinkHops = 40

// FSOptions configures an FS. The zero value is ready to use.
type FSOptions struct {
	// MaxFileSize caps the size of files read, searched or written, in bytes;
	// 0 means 1 MiB.
	MaxFileSize int64
}

// FS gives agents file operations confined to one directory through os.Root.
// Paths are relative and slash-separated; absolute paths, ".." escapes,
// symbolic links leading outside the directory or into .git, NUL bytes and
// anything under .git (any letter case, at any depth) are refused with a
// *PathError wrapping one of the Err* sentinels. ".." is resolved lexically
// before symbolic links are followed, and links are followed one component
// at a time, so none can lead outside or into .git. An FS holds no open
// files (each call opens the root afresh), needs no Close, and is safe for
// concurrent use; concurrent writes to one file are last-writer-wins.
type FS struct {
	dir string
	max int64
}

// OpenFS returns an FS confined to dir, which must be an existing directory.
func OpenFS(dir string, o FSOptions) (*FS, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: open %s: %w", dir, err)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace: open %s: %w; give an existing directory", dir, err)
	}
	r.Close()
	return &FS{dir: abs, max: o.MaxFileSize}, nil
}

func (f *FS) maxSize() int64 {
	if f.max <= 0 {
		return defaultMaxFileSize
	}
	return f.max
}

// open opens the root for one operation.
func (f *FS) open(op, p string) (*os.Root, error) {
	r, err := os.OpenRoot(f.dir)
	if err != nil {
		return nil, &PathError{Op: op, Path: p, Err: err}
	}
	return r, nil
}

// resolve checks p and returns the equivalent path inside r with every
// symbolic link among its existing components replaced by its target, so
// the result names no link except, when followFinal is false, the last
// component. "." stands for the root itself (allowed only when allowRoot).
func resolve(r *os.Root, op, p string, allowRoot, followFinal bool) (string, error) {
	fail := func(err error) (string, error) { return "", &PathError{Op: op, Path: p, Err: err} }
	switch {
	case strings.IndexByte(p, 0) >= 0, p == "" && !allowRoot:
		return fail(ErrInvalidPath)
	case path.IsAbs(p) || filepath.IsAbs(p):
		return fail(ErrAbsolutePath)
	}
	cur, err := checkClean(p)
	if err != nil {
		return fail(err)
	}
	if cur == "." && !allowRoot {
		return fail(ErrIsDir)
	}
	hops := 0
	done := "."
	rest := cur
	for rest != "." && rest != "" {
		name, tail, _ := strings.Cut(rest, "/")
		next := path.Join(done, name)
		if tail == "" && !followFinal {
			return next, nil
		}
		fi, err := r.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return path.Join(done, rest), nil
		}
		if err != nil {
			return fail(err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done, rest = next, tail
			continue
		}
		if hops++; hops > maxSymlinkHops {
			return fail(errors.New("too many levels of symbolic links"))
		}
		target, err := r.Readlink(next)
		if err != nil {
			return fail(err)
		}
		if path.IsAbs(target) || filepath.IsAbs(target) {
			return fail(fmt.Errorf("%w (%s is a symbolic link to %s)", ErrOutsideWorkspace, next, target))
		}
		joined, err := checkClean(path.Join(done, target, tail))
		if err != nil {
			return fail(fmt.Errorf("%w (through the symbolic link %s -> %s)", err, next, target))
		}
		done, rest = ".", joined
	}
	return done, nil
}

// checkClean cleans a relative path and refuses ".." escapes and .git.
func checkClean(p string) (string, error) {
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", ErrOutsideWorkspace
	}
	for part := range strings.SplitSeq(c, "/") {
		if strings.EqualFold(part, ".git") {
			return "", ErrGitDir
		}
	}
	return c, nil
}

// readText reads a regular text file of at most max bytes.
func readText(r *os.Root, name string, max int64) (string, error) {
	file, err := r.Open(name)
	if err != nil {
		return "", err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return "", err
	}
	if fi.IsDir() {
		return "", ErrIsDir
	}
	if fi.Size() > max {
		return "", fmt.Errorf("file is %d bytes, %w of %d bytes; use Search to find the part you need", fi.Size(), ErrTooLarge, max)
	}
	b, err := io.ReadAll(io.LimitReader(file, max+1))
	if err != nil {
		return "", err
	}
	if int64(len(b)) > max {
		return "", fmt.Errorf("file grew past the %w of %d bytes while reading", ErrTooLarge, max)
	}
	if isBinary(b) {
		return "", ErrBinary
	}
	return string(b), nil
}

func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), binarySniff)], 0) >= 0
}

// explain maps file-system errors to the package's sentinels where one fits,
// so agents read one vocabulary.
func explain(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ErrNotFound
	case strings.Contains(err.Error(), "path escapes from parent"):
		return ErrOutsideWorkspace
	}
	return err
}
