package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statgraph/statgraph/internal/asuser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSandboxCheck: `statgraph sandbox check` attacks the sandbox from
// inside and every probe holds, as root and as an unprivileged user.
func TestSandboxCheck(t *testing.T) {
	t.Parallel()
	r := statgraph(t, t.TempDir(), "sandbox", "check")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "all 11 probes held")
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
	assert.Contains(t, string(out), "all 11 probes held")
	assert.Contains(t, string(out), "uid 65534")
}

// TestSandboxCheckCatchesAWeakSandbox: a bwrap that keeps the host's
// network (a stand-in for a machine where a namespace is missing) is
// caught: `sandbox check` names the probes that got through and exits 1,
// and `run` refuses to start, changing nothing.
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
	assert.Contains(t, r.stdout, "2 of 11 probes got through")
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.Contains(line, "loopback") || strings.Contains(line, "abstract") {
			assert.Contains(t, line, "BROKEN")
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
