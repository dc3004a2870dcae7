package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"
)

// Defaults of ListFiles and Search when their max is <= 0, and the longest
// line Search returns before cutting it.
const (
	defaultListMax   = 1000
	defaultSearchMax = 100
	maxMatchLine     = 300
)

// ListFiles lists dir ("" or "." for the root) recursively in lexical order
// as slash paths relative to the root: directories end in "/", files read
// "path (N bytes)", symbolic links "path -> target". .git directories are
// skipped. At most max entries are returned (max <= 0 means 1000); when the
// list is cut, one more entry says how many were left out.
func (f *FS) ListFiles(dir string, max int) ([]string, error) {
	const op = "list"
	if max <= 0 {
		max = defaultListMax
	}
	r, err := f.open(op, dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	start, err := resolve(r, op, dir, true, true)
	if err != nil {
		return nil, err
	}
	var out []string
	left := 0
	err = walk(r, start, func(p string, d fs.DirEntry) error {
		if len(out) >= max {
			left++
			return nil
		}
		out = append(out, describe(r, p, d))
		return nil
	})
	if err != nil {
		return nil, &PathError{Op: op, Path: dir, Err: explain(err)}
	}
	if left > 0 {
		out = append(out, fmt.Sprintf("... %d more entries not shown; list a subdirectory to see them", left))
	}
	return out, nil
}

// describe renders one ListFiles entry.
func describe(r *os.Root, p string, d fs.DirEntry) string {
	switch {
	case d.IsDir():
		return p + "/"
	case d.Type()&fs.ModeSymlink != 0:
		target, err := r.Readlink(p)
		if err != nil {
			return p + " -> ?"
		}
		return p + " -> " + target
	}
	fi, err := d.Info()
	if err != nil {
		return p
	}
	return fmt.Sprintf("%s (%d bytes)", p, fi.Size())
}

// walk calls fn for every entry under start (not start itself) in lexical
// order, without following symbolic links and skipping .git directories.
func walk(r *os.Root, start string, fn func(p string, d fs.DirEntry) error) error {
	return fs.WalkDir(r.FS(), start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == start && d.IsDir() {
			return nil
		}
		if strings.EqualFold(d.Name(), ".git") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		return fn(p, d)
	})
}

// Search finds lines matching pattern in the text files of the root and
// returns them as "path:line: text" in path order (lines over 300 bytes are
// cut). pattern is a Go regular expression; one that does not compile is
// searched for as a literal substring. .git, binary files and files over the
// size cap are skipped. At most max matches are returned (max <= 0 means
// 100); when cut, one more line says how many further lines matched.
func (f *FS) Search(pattern string, max int) ([]string, error) {
	const op = "search"
	if pattern == "" {
		return nil, &PathError{Op: op, Path: ".", Err: errors.New("the pattern is empty; give a regular expression or a literal text")}
	}
	if max <= 0 {
		max = defaultSearchMax
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		re = regexp.MustCompile(regexp.QuoteMeta(pattern))
	}
	r, err := f.open(op, ".")
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []string
	more := 0
	err = walk(r, ".", func(p string, d fs.DirEntry) error {
		if !d.Type().IsRegular() {
			return nil
		}
		text, err := readText(r, p, f.maxSize())
		if err != nil {
			return nil // binary, too large or vanished: not searchable
		}
		for i, line := range strings.Split(text, "\n") {
			if !re.MatchString(line) {
				continue
			}
			if len(out) >= max {
				more++
				continue
			}
			line = strings.TrimSuffix(line, "\r")
			if len(line) > maxMatchLine {
				line = line[:maxMatchLine] + "..."
			}
			out = append(out, fmt.Sprintf("%s:%d: %s", path.Clean(p), i+1, line))
		}
		return nil
	})
	if err != nil {
		return nil, &PathError{Op: op, Path: ".", Err: explain(err)}
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("... %d more matching lines not shown; use a narrower pattern", more))
	}
	return out, nil
}
