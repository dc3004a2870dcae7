package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// ReadFile returns the content of the text file at path. It refuses files
// over the size cap (ErrTooLarge) and binary files (ErrBinary).
func (f *FS) ReadFile(p string) (string, error) {
	const op = "read"
	r, err := f.open(op, p)
	if err != nil {
		return "", err
	}
	defer r.Close()
	name, err := resolve(r, op, p, false, true)
	if err != nil {
		return "", err
	}
	s, err := readText(r, name, f.maxSize())
	if err != nil {
		return "", &PathError{Op: op, Path: p, Err: explain(err)}
	}
	return s, nil
}

// WriteFile replaces the file at path with content, creating it and its
// parent directories inside the root as needed; an existing file keeps its
// permission bits, a new one gets 0644. Content over the size cap is refused
// with ErrTooLarge.
func (f *FS) WriteFile(p, content string) error {
	const op = "write"
	if int64(len(content)) > f.maxSize() {
		return &PathError{Op: op, Path: p, Err: fmt.Errorf("content is %d bytes, %w of %d bytes; write smaller files", len(content), ErrTooLarge, f.maxSize())}
	}
	r, err := f.open(op, p)
	if err != nil {
		return err
	}
	defer r.Close()
	name, err := resolve(r, op, p, false, true)
	if err != nil {
		return err
	}
	perm := fs.FileMode(0o644)
	switch fi, err := r.Stat(name); {
	case err == nil && fi.IsDir():
		return &PathError{Op: op, Path: p, Err: ErrIsDir}
	case err == nil:
		perm = fi.Mode().Perm()
	}
	if dir := path.Dir(name); dir != "." {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return &PathError{Op: op, Path: p, Err: explain(err)}
		}
	}
	if err := r.WriteFile(name, []byte(content), perm); err != nil {
		return &PathError{Op: op, Path: p, Err: explain(err)}
	}
	return nil
}

// ReplaceInFile replaces oldText, which must occur exactly once in the
// file at path, with newText. Zero or several occurrences leave the file as it
// was and return an error wrapping ErrMatchCount that says how many were found.
func (f *FS) ReplaceInFile(p, oldText, newText string) error {
	const op = "replace in"
	if oldText == "" {
		return &PathError{Op: op, Path: p, Err: fmt.Errorf("%w, and it is empty; give the exact text to replace", ErrMatchCount)}
	}
	content, err := f.ReadFile(p)
	if err != nil {
		var pe *PathError
		if errors.As(err, &pe) {
			pe.Op = op
		}
		return err
	}
	switch n := strings.Count(content, oldText); n {
	case 1:
	case 0:
		return &PathError{Op: op, Path: p, Err: fmt.Errorf("%w, found 0 times; copy the text exactly from ReadFile, including whitespace and indentation", ErrMatchCount)}
	default:
		return &PathError{Op: op, Path: p, Err: fmt.Errorf("%w, found %d times; include more surrounding lines so it is unique", ErrMatchCount, n)}
	}
	return f.rewrite(op, p, strings.Replace(content, oldText, newText, 1))
}

// rewrite is WriteFile reporting errors under op.
func (f *FS) rewrite(op, p, content string) error {
	err := f.WriteFile(p, content)
	var pe *PathError
	if errors.As(err, &pe) {
		pe.Op = op
	}
	return err
}

// DeleteFile removes the file at path. A symbolic link is removed itself,
// not its target; directories are refused with ErrIsDir.
func (f *FS) DeleteFile(p string) error {
	const op = "delete"
	r, err := f.open(op, p)
	if err != nil {
		return err
	}
	defer r.Close()
	name, err := resolve(r, op, p, false, false)
	if err != nil {
		return err
	}
	fi, err := r.Lstat(name)
	if err != nil {
		return &PathError{Op: op, Path: p, Err: explain(err)}
	}
	if fi.IsDir() {
		return &PathError{Op: op, Path: p, Err: ErrIsDir}
	}
	if err := r.Remove(name); err != nil {
		return &PathError{Op: op, Path: p, Err: explain(err)}
	}
	return nil
}
