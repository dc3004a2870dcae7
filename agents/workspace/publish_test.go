package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// Another task's branch pointing at a missing commit (left by an older,
// not crash-safe publish) is not this publish's business: Finish reads no
// other branch, publishes, and leaves that one to its own task's Finish.
func TestFinishIgnoresAnotherUnreadableTaskBranch(t *testing.T) {
	ctx := context.Background()
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "q", Root: t.TempDir()})
	require.NoError(t, w.FS().WriteFile("a.txt", "changed\n"))
	_, _, err := w.Commit(ctx, 1, "change a")
	require.NoError(t, err)
	other := filepath.Join(src, ".git", "refs", "heads", "statgraph", "other")
	require.NoError(t, os.MkdirAll(filepath.Dir(other), 0o755))
	require.NoError(t, os.WriteFile(other, []byte("0123456789012345678901234567890123456789\n"), 0o644))

	require.NoError(t, w.Finish(ctx))
	require.NoError(t, w.CheckPublished(ctx))
	assert.FileExists(t, other, "another task's branch is left alone")
	require.NoError(t, os.Remove(other))
	gitRun(t, src, "fsck", "--strict")
}

// A publish killed between renaming its pack and renaming the pack's index
// (statgraph's, or git's own fetch) leaves a pack without an index. git
// ignores it, but go-git then refuses to read any object of the source, so
// every later Prepare failed. Opening the source indexes such a pack.
func TestPrepareIndexesAPackLeftWithoutIndex(t *testing.T) {
	src := newSource(t)
	blob := gitRun(t, src, "hash-object", "-w", "--stdin", "--path", "x.txt")
	cmd := exec.Command("git", "pack-objects", "-q", filepath.Join(src, ".git", "objects", "pack", "pack"))
	cmd.Dir = src
	cmd.Stdin = strings.NewReader(blob + "\n")
	out, err := cmd.Output()
	require.NoError(t, err)
	name := "pack-" + strings.TrimSpace(string(out))
	idx := filepath.Join(src, ".git", "objects", "pack", name+".idx")
	want, err := os.ReadFile(idx)
	require.NoError(t, err)
	require.NoError(t, os.Remove(idx))

	w := prepare(t, Options{Source: src, TaskID: "o", Root: t.TempDir()})
	require.NoError(t, w.FS().WriteFile("a.txt", "changed\n"))
	_, _, err = w.Commit(context.Background(), 1, "change a")
	require.NoError(t, err)
	require.NoError(t, w.Finish(context.Background()))
	got, err := os.ReadFile(idx)
	require.NoError(t, err, "the pack has its index again")
	assert.Equal(t, want, got, "the same index git wrote")
	gitRun(t, src, "fsck", "--strict")
	assert.Equal(t, "blob", gitRun(t, src, "cat-file", "-t", blob))
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
