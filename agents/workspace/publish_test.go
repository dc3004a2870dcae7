package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckPublishedAndRepublish(t *testing.T) {
	ctx := context.Background()
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "p", Root: t.TempDir()})
	require.NoError(t, w.FS().WriteFile("a.txt", "changed\n"))
	_, _, err := w.Commit(ctx, 1, "change a")
	require.NoError(t, err)

	require.ErrorIs(t, w.CheckPublished(ctx), ErrNotPublished, "nothing is published yet")

	// A branch left by an older publish pointing at a commit the source
	// does not have: git itself cannot read it, and Finish replaces it.
	ref := filepath.Join(src, ".git", "refs", "heads", filepath.FromSlash(w.Branch()))
	require.NoError(t, os.MkdirAll(filepath.Dir(ref), 0o755))
	require.NoError(t, os.WriteFile(ref, []byte("0123456789012345678901234567890123456789\n"), 0o644))
	err = w.CheckPublished(ctx)
	require.ErrorIs(t, err, ErrNotPublished)
	assert.Contains(t, err.Error(), "call Finish")

	require.NoError(t, w.Finish(ctx))
	require.NoError(t, w.CheckPublished(ctx))
	assert.Equal(t, gitRun(t, w.Dir(), "rev-parse", "HEAD"), gitRun(t, src, "rev-parse", w.Branch()))
	gitRun(t, src, "fsck", "--full")
}

func TestFinishDropsAnotherUnreadableTaskBranch(t *testing.T) {
	ctx := context.Background()
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "q", Root: t.TempDir()})
	require.NoError(t, w.FS().WriteFile("a.txt", "changed\n"))
	_, _, err := w.Commit(ctx, 1, "change a")
	require.NoError(t, err)
	// Another task's branch pointing at a missing commit stops git's fetch
	// ("bad object"); Finish drops it and publishes.
	other := filepath.Join(src, ".git", "refs", "heads", "statgraph", "other")
	require.NoError(t, os.MkdirAll(filepath.Dir(other), 0o755))
	require.NoError(t, os.WriteFile(other, []byte("0123456789012345678901234567890123456789\n"), 0o644))

	require.NoError(t, w.Finish(ctx))
	require.NoError(t, w.CheckPublished(ctx))
	assert.NoFileExists(t, other, "the unreadable branch was dropped")
	gitRun(t, src, "fsck", "--full")
}

func TestFinishRemovesItsOwnStaleBranchLock(t *testing.T) {
	ctx := context.Background()
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "l", Root: t.TempDir()})
	require.NoError(t, w.FS().WriteFile("a.txt", "changed\n"))
	_, _, err := w.Commit(ctx, 1, "change a")
	require.NoError(t, err)
	// A git killed during its ref update leaves the branch's lock file;
	// every later fetch stops on it ("File exists"). Finish removes that
	// one lock (after it has stayed unchanged a moment) and publishes; the
	// lock of another branch is not its to remove.
	heads := filepath.Join(src, ".git", "refs", "heads")
	own := filepath.Join(heads, filepath.FromSlash(w.Branch())+".lock")
	other := filepath.Join(heads, "statgraph", "other.lock")
	user := filepath.Join(heads, "main.lock")
	for _, p := range []string{own, other, user} {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, nil, 0o644))
	}

	require.NoError(t, w.Finish(ctx))
	require.NoError(t, w.CheckPublished(ctx))
	assert.NoFileExists(t, own)
	assert.FileExists(t, other)
	assert.FileExists(t, user)
	gitRun(t, src, "fsck", "--full")
}
