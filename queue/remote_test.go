package queue

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// The mirror reads a branch's commit from its loose ref file and, once the
// refs are packed, through git; its HEAD ref (read once, when the mirror is
// opened) is what fetch brings the remote's default branch into.
func TestMirrorReadsBranchCommitsLooseAndPacked(t *testing.T) {
	ctx := context.Background()
	remote := t.TempDir()
	run(t, remote, "init", "--quiet", "-b", "trunk")
	run(t, remote, "commit", "--quiet", "--allow-empty", "-m", "one")
	ms := &mirrors{root: t.TempDir()}
	m, err := ms.get(ctx, remote)
	require.NoError(t, err)
	require.Equal(t, "refs/heads/trunk", m.head)

	run(t, remote, "commit", "--quiet", "--allow-empty", "-m", "two")
	run(t, remote, "branch", "statgraph/k/1")
	want := run(t, remote, "rev-parse", "HEAD")
	require.NoError(t, m.fetch(ctx, []string{"statgraph/k/1", "statgraph/k/absent"}))
	require.Equal(t, want, run(t, m.dir, "rev-parse", "refs/heads/trunk"))

	run(t, m.dir, "update-ref", "refs/heads/statgraph/k/1", want) // a loose ref
	require.FileExists(t, filepath.Join(m.dir, ".git", "refs", "heads", "statgraph", "k", "1"))
	got, err := m.commit(ctx, "statgraph/k/1")
	require.NoError(t, err)
	require.Equal(t, want, got)

	run(t, m.dir, "pack-refs", "--all")
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
	run(t, dir, "init", "--quiet", "-b", "statgraph/k/1")
	run(t, dir, "commit", "--quiet", "--allow-empty", "-m", "one")
	want := run(t, dir, "rev-parse", "HEAD")
	got, err := refCommit(ctx, dir, "HEAD")
	require.NoError(t, err)
	require.Equal(t, want, got, "loose")

	run(t, dir, "pack-refs", "--all")
	require.NoFileExists(t, filepath.Join(dir, ".git", "refs", "heads", "statgraph", "k", "1"))
	got, err = refCommit(ctx, dir, "HEAD")
	require.NoError(t, err)
	require.Equal(t, want, got, "packed")

	run(t, dir, "commit", "--quiet", "--allow-empty", "-m", "two") // loose again, newer than packed-refs
	want = run(t, dir, "rev-parse", "HEAD")
	got, err = refCommit(ctx, dir, "HEAD")
	require.NoError(t, err)
	require.Equal(t, want, got, "loose over packed")

	run(t, dir, "checkout", "--quiet", "--detach", "HEAD~1")
	want = run(t, dir, "rev-parse", "HEAD")
	got, err = refCommit(ctx, dir, "HEAD")
	require.NoError(t, err)
	require.Equal(t, want, got, "detached")

	_, err = refCommit(ctx, dir, "refs/heads/absent")
	require.Error(t, err)
}
