// Package copypath holds the one rule for the paths of copy_files that
// every part of statgraph applies: the tasks file's validation (tasks) and
// the git workspaces that copy the files (agents/workspace). Like
// internal/taskid, it is a leaf that imports nothing of the module, so the
// file format checks the rule without depending on the workspaces.
package copypath

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// Check reports whether p is acceptable in copy_files: a relative path
// inside the repository, not inside .git. The error names p and says what
// to write instead. Check is a pure function, safe for concurrent use.
func Check(p string) error {
	first, _, _ := strings.Cut(path.Clean(filepath.ToSlash(p)), "/")
	switch {
	case !filepath.IsLocal(filepath.FromSlash(p)):
		return fmt.Errorf("%q leaves the repository; give a path relative to the repository's top directory, such as \".env\"", p)
	case strings.EqualFold(first, ".git"):
		return fmt.Errorf("%q is inside .git; name files of the working tree", p)
	}
	return nil
}
