package workspace

import (
	"errors"
	"strconv"
	"strings"
)

// Errors returned by this package. File operations wrap them in a *PathError
// that names the operation and the path, so the text an agent reads says what
// went wrong, where, and what to do instead; callers test for them with
// errors.Is. The texts carry no "workspace:" prefix because they are read as
// the tail of a PathError ("write ../x: path escapes the workspace; ...").
var (
	// ErrOutsideWorkspace: the path, after cleaning and following symbolic
	// links, points outside the workspace root.
	ErrOutsideWorkspace = errors.New("path escapes the workspace; use a path relative to the workspace root")
	// ErrAbsolutePath: the path is absolute.
	ErrAbsolutePath = errors.New("absolute paths are not allowed; use a path relative to the workspace root")
	// ErrGitDir: the path is inside a .git directory (compared ignoring case).
	ErrGitDir = errors.New("path is inside .git, which agents may not read or change; work on the files of the working tree instead")
	// ErrInvalidPath: the path is empty or contains a NUL byte.
	ErrInvalidPath = errors.New("path is empty or contains a NUL byte; give a file path relative to the workspace root")
	// ErrNotFound: the file or directory does not exist.
	ErrNotFound = errors.New("no such file or directory; use ListFiles to see what exists")
	// ErrIsDir: a file operation was given a directory.
	ErrIsDir = errors.New("is a directory; give the path of a file")
	// ErrTooLarge: the file or the content is over FSOptions.MaxFileSize.
	ErrTooLarge = errors.New("over the size limit")
	// ErrBinary: the file has a NUL byte in its first 8 KiB.
	ErrBinary = errors.New("file looks binary (NUL byte in its first 8 KiB); only text files can be read or edited")
	// ErrMatchCount: ReplaceInFile found the old text zero or several times.
	ErrMatchCount = errors.New("the old text must occur exactly once")
	// ErrInvalidTaskID: Options.TaskID cannot be used as a directory and branch name.
	ErrInvalidTaskID = errors.New("workspace: invalid task id")
	// ErrClosed: the Workspace was used after Close.
	ErrClosed = errors.New("workspace: used after Close")
	// ErrBranchCheckedOut: Finish would move the branch the source repository has checked out.
	ErrBranchCheckedOut = errors.New("workspace: the source repository has the task branch checked out")
	// ErrDiverged: the task branch in the source repository has commits the workspace does not have.
	ErrDiverged = errors.New("workspace: the task branch in the source repository has commits the workspace does not have")
	// ErrNotPublished: the task branch in the source repository is missing,
	// elsewhere than the workspace's last commit, or cannot be read.
	ErrNotPublished = errors.New("workspace: the task branch is not published in the source repository")
	// ErrSymlink: a state or workspace directory is a symbolic link.
	ErrSymlink = errors.New("workspace: refusing a symbolic link as a state directory")
	// ErrNotRepository: the source is not the top directory of a git repository.
	ErrNotRepository = errors.New("workspace: not a git repository")
	// ErrNoCommit: the source repository has no HEAD commit to start from.
	ErrNoCommit = errors.New("workspace: the repository has no commit yet")
	// ErrRefused: Commit (or Diff) refused the working tree, recording
	// nothing: a path git would refuse to check out or fsck refuses (a
	// .git alias, a .gitmodules that is a link or names an option, a new
	// control character in a name), a file over the cap per file, or more
	// new or changed files or bytes than the caps per commit. The error
	// names the path.
	ErrRefused = errors.New("workspace: commit refused")
)

// PathError records a file operation that failed, the path it was given and
// why. Its text reads "op path: reason", e.g.
// "write ../x: path escapes the workspace; use a path relative to the workspace root".
type PathError struct {
	Op   string // "read", "write", "replace in", "delete", "list", "search"
	Path string // the path as the caller gave it
	Err  error  // one of the Err* sentinels, possibly wrapped with details
}

// Error returns "op path: reason", quoting the path if it has unprintable bytes.
func (e *PathError) Error() string {
	p := e.Path
	if strings.ContainsFunc(p, func(r rune) bool { return !strconv.IsPrint(r) }) || p == "" {
		p = strconv.Quote(p)
	}
	return e.Op + " " + p + ": " + e.Err.Error()
}

// Unwrap returns the underlying error, so errors.Is finds the sentinel.
func (e *PathError) Unwrap() error { return e.Err }
