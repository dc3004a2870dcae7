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

// TestAgentSandboxHosts: an agent CLI's sandbox allows its preset's model
// hosts and its base URL's host:port besides the task's hosts; the
// sandbox the checks share is not changed, and a sandbox with the host's
// network is left as it is.
func TestAgentSandboxHosts(t *testing.T) {
	c, ok := Preset("qwen")
	require.True(t, ok)
	shared := &verifier.Sandbox{Workspace: t.TempDir(), AllowHosts: []string{"proxy.golang.org"}}
	c.Sandbox = shared
	sb, err := c.sandbox([]string{"OPENAI_BASE_URL=http://127.0.0.1:18080/v1", "OPENAI_API_KEY=k", "ANTHROPIC_BASE_URL=https://gw.example.com/anthropic",
		"OTHER_URL=http://10.0.0.1:9/"})
	require.NoError(t, err)
	assert.Equal(t, []string{"proxy.golang.org", "dashscope.aliyuncs.com", "dashscope-intl.aliyuncs.com", "portal.qwen.ai", "chat.qwen.ai",
		"127.0.0.1:18080", "gw.example.com:443"}, sb.AllowHosts)
	assert.Equal(t, []string{"proxy.golang.org"}, shared.AllowHosts, "the checks get only the task's hosts")
	c.Sandbox = &verifier.Sandbox{Workspace: t.TempDir(), Network: true}
	sb, err = c.sandbox([]string{"OPENAI_BASE_URL=http://127.0.0.1:18080/v1"})
	require.NoError(t, err)
	assert.Empty(t, sb.AllowHosts)
}
