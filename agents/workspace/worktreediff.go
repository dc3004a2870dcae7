package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/statgraph/statgraph/internal/fsutil"
	"github.com/statgraph/statgraph/internal/proc"
)

// MaxWorktreeDiff bounds what WorktreeDiff returns; a longer diff is cut
// and ends with a line saying so.
const MaxWorktreeDiff = 1 << 20

// WorktreeDiff returns the unified diff from the HEAD commit of the
// repository at dir to its working tree: modified, deleted and untracked
// (not ignored) files, the work an agent has not committed yet; "" when
// there is none. It is meant for a workspace a run may be using, so it
// writes nothing there and takes no lock in it: git stages the working
// tree into a temporary index and a temporary object directory (the
// repository's objects serve as alternates), with GIT_OPTIONAL_LOCKS=0. A
// file being written at that moment may show half-written. It needs the
// git program (ErrNoGit without it) and fails when dir is not a
// repository with a commit. It is safe for concurrent use.
func WorktreeDiff(ctx context.Context, dir string) (string, error) {
	out, err := proc.RunGit(ctx, proc.Git{Dir: dir, Env: []string{"GIT_OPTIONAL_LOCKS=0"}}, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return "", err
	}
	gitDir := strings.TrimSpace(string(out))
	tmp, err := os.MkdirTemp("", "statgraph-worktree-diff-")
	if err != nil {
		return "", fmt.Errorf("workspace: diff of the working tree of %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp)
	index := filepath.Join(tmp, "index")
	// The repository's index, when it has one, spares re-reading files
	// whose stat data git already recorded.
	if err := fsutil.CopyFile(filepath.Join(gitDir, "index"), index, 0o600); err != nil && !os.IsNotExist(err) {
		return "", fmt.Errorf("workspace: diff of the working tree of %s: %w", dir, err)
	}
	objects := filepath.Join(tmp, "objects")
	if err := os.Mkdir(objects, 0o700); err != nil {
		return "", fmt.Errorf("workspace: diff of the working tree of %s: %w", dir, err)
	}
	env := []string{
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_DIR=" + gitDir,
		"GIT_WORK_TREE=" + dir,
		"GIT_INDEX_FILE=" + index,
		"GIT_OBJECT_DIRECTORY=" + objects,
		"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + filepath.Join(gitDir, "objects"),
	}
	if _, err := proc.RunGit(ctx, proc.Git{Dir: dir, Env: env}, "add", "--all", "--ignore-errors", "--", "."); err != nil {
		return "", err
	}
	out, err = proc.RunGit(ctx, proc.Git{Dir: dir, Env: env, MaxOutput: MaxWorktreeDiff},
		"diff", "--cached", "--no-color", "--no-ext-diff", "--no-textconv", "HEAD", "--")
	if cut, ok := errors.AsType[*proc.GitOutputError](err); ok {
		return strings.ToValidUTF8(string(out), "") + fmt.Sprintf("\n[diff cut at %d of %d bytes]\n", cut.Limit, cut.Total), nil
	}
	if err != nil {
		return "", err
	}
	return string(out), nil
}
