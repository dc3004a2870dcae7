//go:build linux

package agents

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/verifier"
)

// TestSandboxedAgentHasAPrivateHome runs a sandboxed agent CLI that reads
// its preset's config file under $HOME, rewrites it and plants $HOME/.x:
// the config is visible, the writes succeed, and the user's real HOME does
// not change; the private home is kept for the next attempt; the sandbox
// shared with the checks keeps the real HOME.
func TestSandboxedAgentHasAPrivateHome(t *testing.T) {
	if err := verifier.SandboxAvailable(); err != nil {
		t.Skip(err)
	}
	realHome := t.TempDir()
	t.Setenv("HOME", realHome)
	t.Setenv("XDG_CONFIG_HOME", "")
	require.NoError(t, os.MkdirAll(filepath.Join(realHome, ".fake"), 0o700))
	settings := filepath.Join(realHome, ".fake", "settings.json")
	require.NoError(t, os.WriteFile(settings, []byte(`{"login":"user"}`), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(realHome, ".other"), []byte("not named by the preset\n"), 0o600))

	ws := t.TempDir()
	cache := t.TempDir()
	sb := &verifier.Sandbox{Workspace: ws, CacheDir: cache,
		// The real HOME lives under /tmp, which the sandbox replaces:
		// bind it (read-only) so that writing into it would be possible
		// to attempt, as with a HOME outside /tmp.
		ReadOnly: []string{realHome}}
	script := `set -e
test "$HOME" != "` + realHome + `"
cat "$HOME/.fake/settings.json" > "$1/seen.txt"
test ! -e "$HOME/.other"
if test -e "$HOME/.x"; then echo kept > "$1/kept.txt"; fi
echo '{"hook":"evil"}' > "$HOME/.fake/settings.json"
echo planted > "$HOME/.x"
mkdir -p "$XDG_CONFIG_HOME/tool" && echo planted > "$XDG_CONFIG_HOME/tool/config"
echo agent done`
	c := CommandExecutor{Argv: []string{"sh", "-c", script, "sh", "{workdir}"}, Workdir: ws, PromptDir: t.TempDir(),
		Sandbox: sb, HomeConfig: []string{".fake", ".missing.json"}}
	for attempt := range 2 {
		out, err := c.Execute(context.Background(), TaskState{Task: task("h"), RetryCount: attempt})
		require.NoError(t, err)
		require.Equal(t, "agent done", out, "attempt %d: the agent writes its HOME without error", attempt+1)
	}

	seen, err := os.ReadFile(filepath.Join(ws, "seen.txt"))
	require.NoError(t, err)
	assert.Equal(t, `{"hook":"evil"}`+"\n", string(seen), "the second attempt sees the home the first left")
	assert.FileExists(t, filepath.Join(ws, "kept.txt"), "the private home is kept across attempts")

	got, err := os.ReadFile(settings)
	require.NoError(t, err)
	assert.Equal(t, `{"login":"user"}`, string(got), "the user's config is never written back")
	assert.NoFileExists(t, filepath.Join(realHome, ".x"))
	assert.NoDirExists(t, filepath.Join(realHome, ".config"))
	assert.FileExists(t, filepath.Join(cache, "home", ".x"), "the agent's writes land in its private home")
	assert.FileExists(t, filepath.Join(cache, "home", ".config", "tool", "config"), "XDG_CONFIG_HOME is in the private home")
	assert.Empty(t, sb.Home, "the sandbox shared with the checks keeps the real HOME")

	// A check in that sandbox sees the real HOME, read-only.
	res, err := verifier.Run(context.Background(), verifier.Command{Argv: []string{"sh", "-c", `test "$HOME" = "` + realHome + `" && ! echo x > "$HOME/.x"`}, Dir: ws, Sandbox: sb})
	require.NoError(t, err)
	assert.Equal(t, 0, res.ExitCode, res.Output)
	assert.NoFileExists(t, filepath.Join(realHome, ".x"))
}
