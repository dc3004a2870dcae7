package queue

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/statgraph/statgraph/internal/gittest"
	"github.com/stretchr/testify/require"
)

// A worker started with GIT_DIR, GIT_WORK_TREE and GIT_CONFIG_GLOBAL in its
// environment (a hostile global configuration that rewrites the remote's
// URL to a decoy) still clones, lists and fetches the remote it was given,
// and leaves the decoy alone: git runs with the one git profile, which
// drops the caller's GIT_* variables.
func TestMirrorIgnoresCallersGitEnvironment(t *testing.T) {
	ctx := context.Background()
	remote := t.TempDir()
	gittest.Git(t, remote, "init", "--quiet", "-b", "trunk")
	gittest.Git(t, remote, "commit", "--quiet", "--allow-empty", "-m", "remote")
	gittest.Git(t, remote, "branch", "statgraph/k/1")
	want := gittest.Git(t, remote, "rev-parse", "HEAD")

	decoy := t.TempDir()
	gittest.Git(t, decoy, "init", "--quiet", "-b", "decoy")
	gittest.Git(t, decoy, "commit", "--quiet", "--allow-empty", "-m", "decoy")
	gittest.Git(t, decoy, "branch", "statgraph/k/1")
	decoyRefs := gittest.Git(t, decoy, "show-ref")
	hostile := filepath.Join(t.TempDir(), "gitconfig")
	require.NoError(t, os.WriteFile(hostile, []byte("[url \""+decoy+"\"]\n\tinsteadOf = "+remote+"\n"), 0o644))

	t.Setenv("GIT_DIR", filepath.Join(decoy, ".git"))
	t.Setenv("GIT_WORK_TREE", decoy)
	t.Setenv("GIT_CONFIG_GLOBAL", hostile)

	ms := &mirrors{root: t.TempDir()}
	m, err := ms.get(ctx, remote)
	require.NoError(t, err)
	require.Equal(t, "refs/heads/trunk", m.head, "the mirror's HEAD is the remote's")
	got, err := m.remoteCommit(ctx, "statgraph/k/1")
	require.NoError(t, err)
	require.Equal(t, want, got, "ls-remote lists the remote's branch")
	require.NoError(t, m.fetch(ctx, []string{"statgraph/k/1"}))
	require.True(t, m.at(ctx, want), "the mirror's default branch is the remote's commit")

	os.Unsetenv("GIT_DIR")
	os.Unsetenv("GIT_WORK_TREE")
	os.Unsetenv("GIT_CONFIG_GLOBAL")
	require.Equal(t, decoyRefs, gittest.Git(t, decoy, "show-ref"), "the decoy's refs are unchanged")
	_, err = os.Stat(filepath.Join(decoy, ".git", "FETCH_HEAD"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing was fetched into the decoy")
}
