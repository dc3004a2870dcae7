package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// WorktreeDiff shows a live workspace's uncommitted work (a change, a new
// file, a deletion; not an ignored file) against its last commit, and
// leaves the workspace's repository byte for byte as it was.
func TestWorktreeDiffShowsUncommittedWorkReadOnly(t *testing.T) {
	w := prepare(t, Options{Source: newSource(t), TaskID: "7", Root: t.TempDir()})
	ctx := context.Background()
	writeFiles(t, w.Dir(), map[string]string{".gitignore": "*.log\n"})
	_, _, err := w.Commit(ctx, 1, "ignore logs")
	require.NoError(t, err)
	empty, err := WorktreeDiff(ctx, w.Dir())
	require.NoError(t, err)
	assert.Empty(t, empty, "nothing uncommitted yet")

	writeFiles(t, w.Dir(), map[string]string{"a.txt": "alpha changed\n", "new/c.txt": "gamma\n", "run.log": "noise\n"})
	require.NoError(t, os.Remove(filepath.Join(w.Dir(), "dir", "b.txt")))
	gitDir := filepath.Join(w.Dir(), ".git")
	before := snapshot(t, gitDir)

	d, err := WorktreeDiff(ctx, w.Dir())
	require.NoError(t, err)
	assert.Contains(t, d, "-alpha\n+alpha changed\n")
	assert.Contains(t, d, "diff --git a/new/c.txt b/new/c.txt\nnew file mode 100644")
	assert.Contains(t, d, "+gamma\n")
	assert.Contains(t, d, "diff --git a/dir/b.txt b/dir/b.txt\ndeleted file mode 100644")
	assert.NotContains(t, d, "run.log", "ignored files stay out")
	assert.Equal(t, before, snapshot(t, gitDir), "the workspace's repository is not written")

	tree, err := w.TreeHash()
	require.NoError(t, err)
	assert.NotEmpty(t, tree, "the workspace still works after the diff")
	_, err = WorktreeDiff(ctx, t.TempDir())
	assert.Error(t, err, "not a repository")
}
