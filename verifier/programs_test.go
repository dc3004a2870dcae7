package verifier

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statgraph/statgraph/internal/proc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSandboxInitProgram: the small sandbox-init program builds from the
// source statgraph embeds (and is reused, not built again), and it is what
// runs inside a sandbox whose Helper SandboxInitProgram chose: with an
// allowlisted network it stays the command's parent, whose command line
// names it, and carries the proxy in; without, it puts the command under
// Landlock (the sandbox's root refused, the workspace writable). When it
// cannot be built (a module cache without go-landlock), SandboxInitProgram
// says why and gives the fallback, this test binary's sandbox-init, which
// then runs inside.
func TestSandboxInitProgram(t *testing.T) {
	requireSandbox(t)
	self, err := filepath.Abs(os.Args[0])
	require.NoError(t, err)
	fallback := []string{self, "sandbox-init"}
	// parent runs a sandbox through helper with a proxy and returns the
	// command line of the command's parent and the command's HTTP_PROXY.
	parent := func(t *testing.T, helper []string) (string, string) {
		ws := t.TempDir()
		res, err := Run(context.Background(), Command{Dir: ws, Timeout: time.Minute,
			Argv:    []string{"sh", "-c", `tr '\0' ' ' < /proc/$PPID/cmdline; echo; echo "$HTTP_PROXY"`},
			Sandbox: &Sandbox{Workspace: ws, AllowHosts: []string{"example.invalid"}, Helper: helper}})
		require.NoError(t, err)
		require.Equal(t, 0, res.ExitCode, res.Output)
		lines := strings.Split(strings.TrimSpace(res.Output), "\n")
		require.Len(t, lines, 2, res.Output)
		return lines[0], lines[1]
	}

	t.Run("small", func(t *testing.T) {
		dir := t.TempDir()
		helper, err := SandboxInitProgram(dir, fallback)
		require.NoError(t, err)
		require.Len(t, helper, 1)
		_, name := proc.InitSource()
		assert.Equal(t, filepath.Join(dir, name), helper[0])
		st, err := os.Stat(helper[0])
		require.NoError(t, err)
		again, err := BuildSandboxInit(t.Context(), dir)
		require.NoError(t, err)
		st2, err := os.Stat(again)
		require.NoError(t, err)
		assert.Equal(t, st.ModTime(), st2.ModTime(), "the program is reused, not built again")
		entries, _ := os.ReadDir(dir)
		assert.Len(t, entries, 1, "no build directory is left")

		cmdline, proxy := parent(t, helper)
		assert.True(t, strings.HasPrefix(cmdline, helper[0]+" --landlock "), "the small program is the command's parent: %s", cmdline)
		assert.True(t, strings.HasPrefix(proxy, "http://127.0.0.1:"), "the proxy is carried in: %q", proxy)
		if proc.LandlockABI() == 0 {
			t.Skip("this kernel has no Landlock")
		}
		for probe, want := range map[string]string{"write:/statgraph-landlock": "NO ", "write:WS/f": "OK "} {
			ws := t.TempDir()
			res, err := Run(context.Background(), Command{
				Argv: []string{self, "-test.run", "^TestSandboxProbeHelper$"}, Dir: ws, Timeout: time.Minute,
				Env:     []string{"SANDBOX_PROBE=" + strings.Replace(probe, "WS", ws, 1)},
				Sandbox: &Sandbox{Workspace: ws, ReadOnly: []string{self}, Helper: helper}})
			require.NoError(t, err)
			assert.Contains(t, res.Output, want, "%s through the small program", probe)
		}
	})

	t.Run("fallback", func(t *testing.T) {
		t.Setenv("GOMODCACHE", t.TempDir()) // no go-landlock in it, and GOPROXY=off
		dir := t.TempDir()
		helper, err := SandboxInitProgram(dir, fallback)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "sandbox-init program")
		assert.Equal(t, fallback, helper)
		cmdline, proxy := parent(t, helper)
		assert.True(t, strings.HasPrefix(cmdline, self+" sandbox-init --landlock "), "statgraph's own sandbox-init serves: %s", cmdline)
		assert.True(t, strings.HasPrefix(proxy, "http://127.0.0.1:"), "the proxy is carried in: %q", proxy)
		entries, _ := os.ReadDir(dir)
		assert.Empty(t, entries, "no build directory is left")
		nothing, err := SandboxInitProgram(dir, nil)
		assert.NoError(t, err)
		assert.Nil(t, nothing, "no helper wanted, none given")
	})
}

// TestBuildSandboxInitWithoutGo: with no go command the build fails,
// saying so, and leaves nothing behind.
func TestBuildSandboxInitWithoutGo(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	dir := t.TempDir()
	_, err := BuildSandboxInit(t.Context(), dir)
	require.Error(t, err)
	var ee *exec.Error
	assert.ErrorAs(t, err, &ee)
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries)
}
