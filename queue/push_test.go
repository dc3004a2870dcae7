package queue

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

// A worker's pushes to a bare repository of this machine start no git
// process, and leave the remote as git's push would (the branch set, the
// work in progress deleted together with the publication, git fsck
// clean); to an ssh remote they go through git push (here over a stand-in
// ssh that runs the remote's git-receive-pack on this machine), atomically.
func TestMirrorPushesLocalRemotesInProcessAndSSHWithGit(t *testing.T) {
	ctx := context.Background()
	bare := gittest.Clone(t, gittest.Repo(t, nil), "--bare")

	bin := t.TempDir()
	log, mark := filepath.Join(bin, "git.log"), filepath.Join(bin, "ssh.log")
	realGit, err := exec.LookPath("git")
	require.NoError(t, err)
	script := func(name, body string) string {
		p := filepath.Join(bin, name)
		require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755))
		return p
	}
	script("git", `echo "$*" >> `+log+"\nexec "+realGit+` "$@"`+"\n")
	ssh := script("fakessh", `echo "$*" >> `+mark+"\nshift\nexec sh -c \"$*\"\n")
	// git runs with none of statgraph's GIT_* variables: the stand-in ssh
	// is named in the user's configuration, as core.sshCommand.
	home := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[core]\n\tsshCommand = "+ssh+"\n[ssh]\n\tvariant = simple\n"), 0o644))
	t.Setenv("HOME", home)

	for _, tc := range []struct {
		remote string
		git    bool // pushes go through git
	}{
		{bare, false},
		{"file://" + bare, false},
		{"ssh://localhost" + bare, true},
	} {
		ms := &mirrors{root: t.TempDir()}
		m, err := ms.get(ctx, tc.remote)
		require.NoError(t, err, tc.remote)
		c := gittest.Git(t, m.dir, "commit-tree", "-p", "HEAD", "-m", "work "+tc.remote, "HEAD^{tree}")
		name := strings.NewReplacer("/", "_", ":", "_").Replace(tc.remote)
		branch, wip := "statgraph/k/"+name, "statgraph-wip/k/"+name
		os.Remove(log)
		os.Remove(mark)
		t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))

		require.NoError(t, m.push(ctx, c, wip), tc.remote)
		require.NoError(t, m.publish(ctx, c, branch, wip), tc.remote)
		// Publishing again (an attempt cut off before it recorded its
		// publication) finds the work in progress gone, as git does.
		require.NoError(t, m.publish(ctx, c, branch, wip), tc.remote)

		calls, _ := os.ReadFile(log)
		sshCalls, _ := os.ReadFile(mark)
		t.Setenv("PATH", strings.TrimPrefix(os.Getenv("PATH"), bin+string(os.PathListSeparator)))
		if tc.git {
			require.Contains(t, string(calls), "push --quiet --force --atomic", tc.remote)
			require.Contains(t, string(sshCalls), "git-receive-pack", tc.remote)
		} else {
			require.Empty(t, string(calls), "git processes started for a push to %s", tc.remote)
		}
		require.Equal(t, c, gittest.Git(t, bare, "rev-parse", "refs/heads/"+branch), tc.remote)
		require.NotContains(t, gittest.Git(t, bare, "show-ref"), wip, tc.remote)
		require.Empty(t, gittest.Git(t, bare, "fsck", "--strict", "--no-progress", "--no-dangling"), tc.remote)
	}
}
