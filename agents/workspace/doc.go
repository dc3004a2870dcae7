// Package workspace gives each statgraph task an isolated git workspace and
// gives agents file operations that cannot leave it.
//
// # Workspaces
//
// Prepare makes a local clone of the user's repository under Options.Root
// (by default under StateRoot, outside the repository, so nothing a task
// runs finds the user's .git by walking up from its workspace) on the
// branch BranchName(plan, task-id), "statgraph/<plan>/<task-id>", starting
// from the source's HEAD or Options.Base. A root or workspace directory
// that is a symbolic link is refused (ErrSymlink). The
// clone shares the source's object files through hard links, as
// `git clone --local` does (a small source's few loose objects are copied
// into one pack instead, which makes fewer directories), so it costs about
// one checkout of the working tree. The user's checked-out branch, index and working tree are only read,
// also when they are dirty. Preparing a task whose workspace exists reopens
// it, so a resumed run keeps its commits and uncommitted work.
//
// The orchestrator then drives the task through attempts: Commit records one
// commit per attempt ("<task-id>: attempt <n>: <summary>"), Diff shows the
// whole change against the base, TreeHash keys cached verifier results,
// Reset goes back to the base or to the last attempt before a retry, and
// Finish publishes the branch into the source repository (a fast-forward of
// the task branch, never the checked-out branch) for the user to review
// and merge with ordinary git. Publishing is the one step that writes into
// the user's repository, so it writes as git's fetch does (in-process, see
// publish.go): objects under temporary names, fsynced and renamed, then the
// ref under git's lock file: a kill -9 at any moment leaves the repository
// passing git fsck, and Finish called again completes it.
// CheckPublished tells whether the branch is there and readable. The package is a sub-package of agents because
// it depends only on go-git and the standard library and is useful on its
// own, for example to tests that need a scratch clone.
//
// # The stat cache
//
// Commit, Diff and TreeHash walk the working tree with one lstat per file
// and read only the files whose stat (size, mtime, ctime, inode, mode)
// changed since the workspace last hashed them. Every walk first takes
// "now" by the file system's clock (on Linux by setting the mtime of .git
// to now and reading it back, elsewhere by writing
// .git/statgraph-scan-stamp); a file whose mtime is not strictly before the
// stamp of the walk that hashed it is racy (it may change again within the
// same clock tick without its stat changing, git's "racy git" problem) and
// is read again by the next walk, so a file rewritten within the same
// second, or the same timestamp tick, is never missed. Unchanged
// directories keep their tree hash, and only the objects the repository
// lacks are written, as one pack per commit (a new file costs far more
// than its bytes). The cache lives in memory: Prepare fills it from the
// checkout it writes; a reopened workspace starts empty and its first walk
// reads every file once. The index is not trusted for content: Commit
// rewrites it when the recorded tree differs from it, so git status in the
// workspace and go-git's Reset see a clean tree, and reads it only to know
// which ignored paths are tracked and which entries are submodules.
//
// # File operations for agents
//
// FS (from Workspace.FS or OpenFS) lists, reads, searches, writes, edits and
// deletes files through os.Root confined to one directory. Paths are checked
// before use: absolute paths, ".." escapes, symbolic links that lead outside
// or into .git, NUL bytes, anything under .git in any letter case, and files
// over a size cap are refused. Every refusal is a *PathError whose text an
// agent can act on, e.g.
//
//	write ../x: path escapes the workspace; use a path relative to the workspace root
//
// and which wraps one of the sentinel errors (ErrOutsideWorkspace, ...) for
// programs.
//
// Designs turned down: go-git's CloneOptions.Shared (objects/info/alternates)
// is as fast but leaves the workspace reading the source's object files, so
// a `git gc --prune` or a deleted branch in the user's repository can take
// objects from under a running task; a clone through go-git's file transport
// runs git-upload-pack and copies every object into a new pack; `git
// worktree` would write into the source's .git and needs the git binary.
// Hard-linked object files cost the same as alternates and leave the
// workspace whole whatever happens to the source.
package workspace
