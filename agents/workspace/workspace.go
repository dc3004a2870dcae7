package workspace

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/statgraph/statgraph/internal/taskid"
)

// BranchPrefix is the prefix of every task branch; see BranchName.
const BranchPrefix = "statgraph/"

// BranchName returns the branch task taskID of plan works on:
// "statgraph/<plan>/<taskID>", e.g. "statgraph/tasks-1c9e0b/3.2", or
// "statgraph/<taskID>" when plan is "". It is the one place branch names
// are made; Workspace.Branch returns the same name.
func BranchName(plan, taskID string) string {
	if plan == "" {
		return BranchPrefix + taskID
	}
	return BranchPrefix + plan + "/" + taskID
}

// baseRef records the commit a workspace started from, inside the workspace
// repository only; it survives restarts and keeps the base reachable.
const baseRef = plumbing.ReferenceName("refs/statgraph/base")

// Options says which repository a workspace is made from and where it lives.
// Only Source and TaskID are required; every other zero value has a default.
type Options struct {
	// Source is the path of the user's repository (the directory holding .git).
	Source string
	// TaskID names the workspace directory and, with Plan, the branch
	// (see BranchName).
	// Allowed: letters, digits, '.', '-' and '_', starting with a letter or a
	// digit, at most 100 characters, no "..", not ending in '.' or ".lock"
	// (so "3", "3.2" and "fix-parser_2" are fine).
	TaskID string
	// Base is the commit-ish the task starts from; "" means the source's HEAD.
	// It (or its merge with Merge) is the workspace's base: what
	// Reset("base") goes back to and Diff compares with.
	Base string
	// Start, when set, is a commit-ish of the source a new workspace's
	// branch and files start from instead of the base, which stays the
	// base: a run taken over from another machine continues on its last
	// attempt's commit (which descends from the base), while a reset and
	// the diff of the whole task still go back to where the task began.
	// An existing workspace ignores it.
	Start string
	// Plan is the short name of the plan the task belongs to (a
	// dispatch.Plan's Key), so that two plans in one repository never share a
	// branch: the branch is BranchName(Plan, TaskID). "" means the branch
	// statgraph/<TaskID>. Same rules as TaskID.
	Plan string
	// Merge names more branches of the source that a new workspace merges
	// into Base (see merge.go): the task then starts from that merge, with
	// any conflicting file holding git's conflict markers (Conflicts lists
	// them). Branches already contained in another are left out. Base must
	// then be a branch name too.
	Merge []string
	// SkipConflicts leaves out of the merge every Merge branch that
	// conflicts with what was merged before it (Skipped lists them), so the
	// result holds no conflict markers.
	SkipConflicts bool
	// Branch is the branch the workspace works on and Finish publishes; ""
	// means BranchName(Plan, TaskID).
	Branch string
	// CopyFiles are paths, relative to Source, of files (typically
	// untracked, such as .env) copied into a new workspace and excluded
	// from its commits. A path escaping Source or inside .git is refused.
	CopyFiles []string
	// Setup, when set, runs once in each new workspace after CopyFiles,
	// with the working tree's path (e.g. to install dependencies). It is
	// run again by the next Prepare if it failed or was interrupted.
	Setup func(ctx context.Context, dir string) error
	// Root is the directory holding workspaces; "" means
	// StateRoot()/work/<source-name>-<hash of Source's path>, outside the
	// repository. Neither Root nor the workspace in it may be a symbolic
	// link (ErrSymlink).
	Root string
	// AuthorName and AuthorEmail sign the attempt commits; "" means
	// "statgraph" and "statgraph@localhost".
	AuthorName, AuthorEmail string
	// MaxFileBytes caps the size of one file a Commit records; a larger
	// file is refused (ErrRefused) before anything reads it. 0 means
	// DefaultMaxFileBytes (100 MiB).
	MaxFileBytes int64
	// MaxCommitFiles and MaxCommitBytes cap the files one Commit adds or
	// changes against the last commit and the bytes of their content;
	// more is refused (ErrRefused) naming the file that passed the cap.
	// 0 means DefaultMaxCommitFiles (2,000) and DefaultMaxCommitBytes
	// (50 MiB).
	MaxCommitFiles int
	MaxCommitBytes int64
}

// Workspace is an isolated clone of the source repository in which one task
// works on its own branch. Its methods are safe for concurrent use: git
// operations are serialised by a mutex. A Workspace holds no open files, so
// Close only marks it unusable.
type Workspace struct {
	dir      string // absolute path of the working tree
	source   string // absolute path of the user's repository
	taskID   string
	branch   plumbing.ReferenceName
	base     plumbing.Hash
	name     string // author name
	email    string // author email
	fs       *FS
	limits   commitLimits
	mu       sync.Mutex // guards repo, isClosed, scan, lastScrubbed and checked
	repo     *git.Repository
	isClosed bool
	scan     scanState // what the last scans of the working tree saw
	// lastScrubbed lists the files the last Commit recorded with a secret
	// replaced (see Scrubbed).
	lastScrubbed []string
	merged       mergeInfo // how the base was merged, read from its commit
	// checked holds the commits on the branch known to hold nothing
	// Commit refuses: those Commit made and those checkHistory read.
	checked map[plumbing.Hash]bool
}

// Prepare makes the workspace for o.TaskID under o.Root (or reopens it when it
// already exists, keeping its commits and any uncommitted work) and returns it
// checked out on branch BranchName(o.Plan, o.TaskID).
//
// A new workspace is a local clone whose object files are hard links to the
// source's (copies when the file system cannot link), like `git clone --local`,
// except that a small source's few loose objects are copied into one pack;
// the working tree is then checked out from the base commit, which also
// fills the stat cache, so the first Commit reads no file. It is built in a
// temporary directory and renamed into place, so a crash never leaves a
// half-made workspace under its final name. Prepare reads the source
// repository and never changes it; it writes only under Root (which, when
// a caller puts it inside the source, gets a .gitignore so git status
// stays clean).
func Prepare(ctx context.Context, o Options) (*Workspace, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := validateTaskID(o.TaskID); err != nil {
		return nil, err
	}
	if o.Plan != "" {
		if err := validateTaskID(o.Plan); err != nil {
			return nil, fmt.Errorf("workspace: Options.Plan: %w", err)
		}
	}
	if o.Source == "" {
		return nil, errors.New("workspace: Options.Source is empty; give the path of the git repository to work on")
	}
	source, err := filepath.Abs(o.Source)
	if err != nil {
		return nil, fmt.Errorf("workspace: source %s: %w", o.Source, err)
	}
	root := o.Root
	if root == "" {
		state, err := StateRoot()
		if err != nil {
			return nil, err
		}
		root = filepath.Join(state, "work", KeyedName(filepath.Base(source), 8, source))
	}
	if root, err = filepath.Abs(root); err != nil {
		return nil, fmt.Errorf("workspace: root %s: %w", o.Root, err)
	}
	w := &Workspace{
		dir:    filepath.Join(root, o.TaskID),
		source: source,
		taskID: o.TaskID,
		branch: plumbing.NewBranchReferenceName(cmp.Or(o.Branch, BranchName(o.Plan, o.TaskID))),
		name:   cmp.Or(o.AuthorName, "statgraph"),
		email:  cmp.Or(o.AuthorEmail, "statgraph@localhost"),
		limits: limitsOf(o),
	}
	defer holdSource(source)() // a merge of statgraph's packs waits until this workspace has linked them
	src, err := openSource(source)
	if err != nil {
		return nil, err
	}
	base, err := resolveBase(src, source, o.Base)
	if err != nil {
		return nil, err
	}
	for _, p := range []string{root, w.dir} {
		if err := RefuseSymlink(p); err != nil {
			return nil, err
		}
	}
	plan, err := planMerge(src, source, o, base)
	if err != nil {
		return nil, err
	}
	if o.Start != "" {
		if plan.start, err = resolveBase(src, source, o.Start); err != nil {
			return nil, fmt.Errorf("workspace: Options.Start: %w", err)
		}
	}
	if _, err := os.Stat(filepath.Join(w.dir, git.GitDirName)); err == nil {
		if err := w.reopen(o.Base, plan); err != nil {
			return nil, err
		}
	} else {
		if err := makeRoot(root); err != nil {
			return nil, err
		}
		if err := w.create(ctx, src, root, plan); err != nil {
			return nil, err
		}
	}
	if err := w.setup(ctx, o); err != nil {
		return nil, err
	}
	return w, nil
}

// reopen attaches w to the existing workspace at w.dir. A Base (and Merge)
// that resolves to another commit than the one the workspace started from
// is an error, since the recorded base is what Diff and Reset compare with.
func (w *Workspace) reopen(wantBase string, plan mergePlan) error {
	repo, _, err := openRepo(w.dir, false)
	if err != nil {
		return fmt.Errorf("workspace: reopen %s: %w; remove the directory to start the task over", w.dir, err)
	}
	ref, err := repo.Reference(baseRef, true)
	if err != nil {
		return fmt.Errorf("workspace: %s is not a statgraph workspace (no %s): %w; remove it or choose another Root", w.dir, baseRef, err)
	}
	merged, err := readMergeInfo(repo, ref.Hash())
	if err != nil {
		return fmt.Errorf("workspace: %s: base commit %s: %w; remove the directory to start the task over", w.dir, ref.Hash(), err)
	}
	if wantBase != "" && !plan.startedFrom(ref.Hash(), merged) {
		return fmt.Errorf("workspace: task %s already has a workspace at %s started from %s, not from Base %q (%s); remove the directory to start over",
			w.taskID, w.dir, ref.Hash(), wantBase, plan.describe())
	}
	head, err := repo.Storer.Reference(plumbing.HEAD)
	if err != nil || head.Type() != plumbing.SymbolicReference || head.Target() != w.branch {
		return fmt.Errorf("workspace: %s is not on branch %s; check that branch out there or remove the directory", w.dir, w.branch.Short())
	}
	w.repo, w.base, w.merged = repo, ref.Hash(), merged
	w.fs = &FS{dir: w.dir}
	return nil
}

// create builds a new workspace in a temporary directory under root and
// renames it to w.dir. If another Prepare of the same task won the rename,
// create reopens that one.
func (w *Workspace) create(ctx context.Context, src *git.Repository, root string, plan mergePlan) error {
	tmp, err := os.MkdirTemp(root, "."+w.taskID+".prepare-")
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	if err := w.build(ctx, src, tmp, plan); err != nil {
		return err
	}
	if err := os.Rename(tmp, w.dir); err != nil {
		w.scan = scanState{} // what build saw is not the workspace reopened below
		if _, statErr := os.Stat(filepath.Join(w.dir, git.GitDirName)); statErr == nil {
			return w.reopen("", plan)
		}
		return fmt.Errorf("workspace: move the new workspace to %s: %w; if that directory is not a workspace, remove it or choose another Root", w.dir, err)
	}
	return w.reopen("", plan)
}

// build makes a repository in dir sharing the source's objects, with the
// task branch and the base ref at the plan's base (or at the merge of its
// branches, made here), and checks the branch out.
func (w *Workspace) build(ctx context.Context, src *git.Repository, dir string, plan mergePlan) error {
	gitDir := filepath.Join(dir, git.GitDirName)
	base := plan.base
	if err := initGitDir(gitDir, w.source, w.branch, base, plan.refs()); err != nil {
		return err
	}
	srcGit, err := sourceGitDir(w.source)
	if err != nil {
		return err
	}
	if err := shareObjects(ctx, src, srcGit, gitDir, filepath.Join(w.dir, git.GitDirName)); err != nil {
		return err
	}
	if len(plan.tips) > 1 {
		merged, err := w.mergeTips(ctx, dir, plan)
		if err != nil {
			return err
		}
		base = merged
	}
	repo, closeRepo, err := openRepo(dir, true)
	if err != nil {
		return fmt.Errorf("workspace: open the new repository %s: %w", dir, err)
	}
	defer closeRepo()
	if base != plan.base {
		for _, r := range []plumbing.ReferenceName{w.branch, baseRef} {
			if err := repo.Storer.SetReference(plumbing.NewHashReference(r, base)); err != nil {
				return fmt.Errorf("workspace: set %s of %s to the merge: %w", r, dir, err)
			}
		}
	}
	head := base
	if !plan.start.IsZero() {
		if err := repo.Storer.SetReference(plumbing.NewHashReference(w.branch, plan.start)); err != nil {
			return fmt.Errorf("workspace: set %s of %s to the start %s: %w", w.branch, dir, plan.start, err)
		}
		head = plan.start
	}
	if _, err := repo.CommitObject(head); err != nil {
		return fmt.Errorf("workspace: commit %s is missing after sharing the source's objects (did the source change meanwhile?): %w; try again", head, err)
	}
	return w.checkout(ctx, repo, dir, head)
}

// Dir returns the absolute path of the workspace's working tree.
func (w *Workspace) Dir() string { return w.dir }

// Branch returns the task branch name, BranchName(plan, task id) unless
// Options.Branch named another.
func (w *Workspace) Branch() string { return w.branch.Short() }

// FS returns the file operations for agents, confined to the working tree.
func (w *Workspace) FS() *FS { return w.fs }

// Close marks the workspace closed; later calls of its git methods return
// ErrClosed. The directory stays on disk so a later Prepare can resume it.
// Close is idempotent and always returns nil.
func (w *Workspace) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.isClosed = true
	return nil
}

// lock takes w.mu and reports ErrClosed or a done ctx; on error the mutex is
// released.
func (w *Workspace) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	w.mu.Lock()
	if w.isClosed {
		w.mu.Unlock()
		return ErrClosed
	}
	return nil
}

// validateTaskID reports whether id is safe as one directory name and as
// part of a branch name, by the rule tasks files are validated with
// (internal/taskid), so an id validate accepts is one Prepare accepts.
func validateTaskID(id string) error {
	if why := taskid.Reason(id); why != "" {
		return fmt.Errorf("%w %q: %s; %s", ErrInvalidTaskID, id, why, taskid.Rule)
	}
	return nil
}
