package queue

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

// The mirror reads a branch's commit from its loose ref file and, once the
// refs are packed, through git; its HEAD ref (read once, when the mirror is
// opened) is what fetch brings the remote's default branch into.
func TestMirrorReadsBranchCommitsLooseAndPacked(t *testing.T) {
	ctx := context.Background()
	remote := t.TempDir()
	gittest.Git(t, remote, "init", "--quiet", "-b", "trunk")
	gittest.Git(t, remote, "commit", "--quiet", "--allow-empty", "-m", "one")
	ms := &mirrors{root: t.TempDir()}
	m, err := ms.get(ctx, remote)
	require.NoError(t, err)
	require.Equal(t, "refs/heads/trunk", m.head)

	gittest.Git(t, remote, "commit", "--quiet", "--allow-empty", "-m", "two")
	gittest.Git(t, remote, "branch", "statgraph/k/1")
	want := gittest.Git(t, remote, "rev-parse", "HEAD")
	require.NoError(t, m.fetch(ctx, []string{"statgraph/k/1", "statgraph/k/absent"}))
	require.Equal(t, want, gittest.Git(t, m.dir, "rev-parse", "refs/heads/trunk"))

	gittest.Git(t, m.dir, "update-ref", "refs/heads/statgraph/k/1", want) // a loose ref
	require.FileExists(t, filepath.Join(m.dir, ".git", "refs", "heads", "statgraph", "k", "1"))
	got, err := m.commit(ctx, "statgraph/k/1")
	require.NoError(t, err)
	require.Equal(t, want, got)

	gittest.Git(t, m.dir, "pack-refs", "--all")
	require.NoFileExists(t, filepath.Join(m.dir, ".git", "refs", "heads", "statgraph", "k", "1"))
	got, err = m.commit(ctx, "statgraph/k/1")
	require.NoError(t, err)
	require.Equal(t, want, got)

	_, err = m.commit(ctx, "statgraph/k/absent")
	require.Error(t, err)
}

// A worker reads a workspace's HEAD commit from its files: through the
// loose ref, the packed ref (a new workspace's branch is packed), and a
// detached HEAD; the same commit git reports in each case.
func TestRefCommitReadsHeadLoosePackedAndDetached(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	gittest.Git(t, dir, "init", "--quiet", "-b", "statgraph/k/1")
	gittest.Git(t, dir, "commit", "--quiet", "--allow-empty", "-m", "one")
	want := gittest.Git(t, dir, "rev-parse", "HEAD")
	got, err := refCommit(ctx, dir, "HEAD")
	require.NoError(t, err)
	require.Equal(t, want, got, "loose")

	gittest.Git(t, dir, "pack-refs", "--all")
	require.NoFileExists(t, filepath.Join(dir, ".git", "refs", "heads", "statgraph", "k", "1"))
	got, err = refCommit(ctx, dir, "HEAD")
	require.NoError(t, err)
	require.Equal(t, want, got, "packed")

	gittest.Git(t, dir, "commit", "--quiet", "--allow-empty", "-m", "two") // loose again, newer than packed-refs
	want = gittest.Git(t, dir, "rev-parse", "HEAD")
	got, err = refCommit(ctx, dir, "HEAD")
	require.NoError(t, err)
	require.Equal(t, want, got, "loose over packed")

	gittest.Git(t, dir, "checkout", "--quiet", "--detach", "HEAD~1")
	want = gittest.Git(t, dir, "rev-parse", "HEAD")
	got, err = refCommit(ctx, dir, "HEAD")
	require.NoError(t, err)
	require.Equal(t, want, got, "detached")

	_, err = refCommit(ctx, dir, "refs/heads/absent")
	require.Error(t, err)
}
