package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statgraph/statgraph/internal/asuser"
	"github.com/statgraph/statgraph/internal/proc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// probeCount is how many attacks `sandbox check` makes on this machine:
// one more, against the Landlock layer, where the kernel has Landlock.
func probeCount() int {
	if proc.LandlockABI() > 0 {
		return 12
	}
	return 11
}

// TestSandboxCheck: `statgraph sandbox check` attacks the sandbox from
// inside and every probe holds, as root and as an unprivileged user, and
// it names the Landlock ABI it enforces.
func TestSandboxCheck(t *testing.T) {
	t.Parallel()
	r := statgraph(t, t.TempDir(), "sandbox", "check")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, fmt.Sprintf("all %d probes held", probeCount()))
	if abi := proc.LandlockABI(); abi > 0 {
		assert.Contains(t, r.stdout, fmt.Sprintf("cannot write the sandbox's root (Landlock ABI %d)", abi))
		assert.Regexp(t, fmt.Sprintf(`(?m)^filesystem +bwrap's mounts and Landlock ABI %d `, abi), r.stdout)
	}
	assert.NotContains(t, r.stdout, "BROKEN")
	for _, probe := range []string{"no capabilities", "cannot read a file in $HOME", "cannot reach the host's loopback",
		"cannot reach a unix socket outside", "cannot read statgraph's environment"} {
		assert.Contains(t, r.stdout, probe)
	}
	if os.Getuid() != 0 {
		return
	}
	// As uid 65534, from a copy of the binary it can run, with a home of its own.
	dir := asuser.Dir(t)
	cmd := asuser.Command(t, dir, asuser.Copy(t, bin, dir), "sandbox", "check")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "as uid 65534:\n%s", out)
	assert.Contains(t, string(out), fmt.Sprintf("all %d probes held", probeCount()))
	assert.Contains(t, string(out), "uid 65534")
}

// TestSandboxCheckCatchesAWeakSandbox: a bwrap that keeps the host's
// network (a stand-in for a machine where a namespace is missing) is
// caught: `sandbox check` names the probes that got through and exits 1,
// and `run` refuses to start, changing nothing. Where Landlock scopes
// abstract sockets, the host's abstract socket stays out of reach even so.
func TestSandboxCheckCatchesAWeakSandbox(t *testing.T) {
	t.Parallel()
	real, err := exec.LookPath("bwrap")
	require.NoError(t, err)
	fake := t.TempDir()
	script := "#!/bin/sh\nfor a; do shift; [ \"$a\" = --unshare-net ] || set -- \"$@\" \"$a\"; done\nexec " + real + " \"$@\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(fake, "bwrap"), []byte(script), 0o755))
	path := "PATH=" + fake + ":" + os.Getenv("PATH")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, stdout, stderr := command(ctx, t.TempDir(), "sandbox", "check")
	cmd.Env = append(cmd.Env, path)
	r := wait(t, cmd.Run(), stdout, stderr)
	assert.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	// With the host's network, its abstract sockets are reachable unless
	// Landlock (ABI 6 and later) scopes them: then only loopback breaks.
	scoped := proc.LandlockABI() >= 6
	broken := 2
	if scoped {
		broken = 1
	}
	assert.Contains(t, r.stdout, fmt.Sprintf("%d of %d probes got through", broken, probeCount()))
	probes, _, _ := strings.Cut(r.stdout, "\nLAYER")
	for _, line := range strings.Split(probes, "\n") {
		switch {
		case strings.Contains(line, "loopback"), strings.Contains(line, "abstract") && !scoped:
			assert.Contains(t, line, "BROKEN")
		case strings.Contains(line, "abstract"):
			assert.Contains(t, line, "held", "Landlock's scope holds it")
		}
	}

	const tasksJSON = `{"tasks": [{"id": 1, "title": "t", "executor": {"command": ["true"]}, "test_cmd": "true"}]}` + "\n"
	repo := newRepo(t, map[string]string{"tasks.json": tasksJSON})
	cmd, stdout, stderr = command(ctx, repo, "run", "tasks.json")
	cmd.Env = append(cmd.Env, path)
	r = wait(t, cmd.Run(), stdout, stderr)
	assert.Equal(t, 2, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "cannot reach the host's loopback")
	assert.Contains(t, r.stderr, "statgraph sandbox check")
	b, err := os.ReadFile(filepath.Join(repo, "tasks.json"))
	require.NoError(t, err)
	assert.Equal(t, tasksJSON, string(b), "tasks.json is unchanged")
}

// TestSandboxCheckLeavesHomeUntouched: with nothing in $HOME to aim at,
// `sandbox check` makes its canary there and removes it, and $HOME's
// modification time is what it was (before, it was the time of the check).
func TestSandboxCheckLeavesHomeUntouched(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	require.NoError(t, os.Chtimes(home, old, old))
	r := statgraphEnv(t, t.TempDir(), []string{"HOME=" + home}, "sandbox", "check")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "cannot read a file in $HOME")
	fi, err := os.Stat(home)
	require.NoError(t, err)
	assert.Equal(t, old, fi.ModTime().UTC(), "$HOME's modification time")
	ents, err := os.ReadDir(home)
	require.NoError(t, err)
	assert.Empty(t, ents)
}
