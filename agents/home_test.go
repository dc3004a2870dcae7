//go:build linux

package agents

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/secret"
	"github.com/statgraph/statgraph/verifier"
)

// fakeUserHome points HOME at a new directory holding .fake/settings.json
// and .other, and returns it.
func fakeUserHome(t *testing.T) string {
	t.Helper()
	realHome := t.TempDir()
	t.Setenv("HOME", realHome)
	t.Setenv("XDG_CONFIG_HOME", "")
	require.NoError(t, os.MkdirAll(filepath.Join(realHome, ".fake"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(realHome, ".fake", "settings.json"), []byte(`{"login":"user"}`), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(realHome, ".other"), []byte("not named by the preset\n"), 0o600))
	return realHome
}

// assertNoHomes fails when an agent home is left under dir.
func assertNoHomes(t *testing.T, dir, when string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		require.ErrorIs(t, err, os.ErrNotExist)
	}
	assert.Empty(t, entries, "%s: no private home is left under %s", when, dir)
}

// TestSandboxedAgentHasAPrivateHome runs a sandboxed agent CLI that reads
// its preset's config file under $HOME, rewrites it and plants $HOME/.x:
// the config is visible, the writes succeed, and the user's real HOME does
// not change; each attempt gets a fresh copy, removed when it ends; the
// sandbox shared with the checks keeps the real HOME.
func TestSandboxedAgentHasAPrivateHome(t *testing.T) {
	if err := verifier.SandboxAvailable(); err != nil {
		t.Fatal("the sandbox is a required part of statgraph (.ci/run installs bubblewrap): ", err)
	}
	realHome := fakeUserHome(t)
	settings := filepath.Join(realHome, ".fake", "settings.json")
	ws := t.TempDir()
	homes := filepath.Join(t.TempDir(), "homes")
	sb := &verifier.Sandbox{Workspace: ws, CacheDir: t.TempDir(),
		// The real HOME lives under /tmp, which the sandbox replaces:
		// bind it (read-only) so that writing into it would be possible
		// to attempt, as with a HOME outside /tmp.
		ReadOnly: []string{realHome}}
	script := `set -e
test "$HOME" != "` + realHome + `"
echo "$HOME" >> "$1/homes.txt"
cat "$HOME/.fake/settings.json" >> "$1/seen.txt"
test ! -e "$HOME/.other"
if test -e "$HOME/.x"; then echo kept > "$1/kept.txt"; fi
echo '{"hook":"evil"}' > "$HOME/.fake/settings.json"
echo planted > "$HOME/.x"
mkdir -p "$XDG_CONFIG_HOME/tool" && echo planted > "$XDG_CONFIG_HOME/tool/config"
echo agent done`
	c := CommandExecutor{Argv: []string{"sh", "-c", script, "sh", "{workdir}"}, Workdir: ws, PromptDir: t.TempDir(),
		Sandbox: sb, HomeDir: homes, HomeConfig: []string{".fake", ".missing.json"}}
	for attempt := range 2 {
		out, err := c.Execute(context.Background(), TaskState{Task: task("h"), RetryCount: attempt})
		require.NoError(t, err)
		require.Equal(t, "agent done", out, "attempt %d: the agent writes its HOME without error", attempt+1)
		assertNoHomes(t, homes, "after the attempt")
	}

	seen, err := os.ReadFile(filepath.Join(ws, "seen.txt"))
	require.NoError(t, err)
	assert.Equal(t, `{"login":"user"}{"login":"user"}`, string(seen), "each attempt starts from a fresh copy of the user's config")
	assert.NoFileExists(t, filepath.Join(ws, "kept.txt"), "nothing of the first attempt's home is left for the second")
	used, err := os.ReadFile(filepath.Join(ws, "homes.txt"))
	require.NoError(t, err)
	assert.Regexp(t, "^"+homes+"/attempt-1-[^/\n]+\n"+homes+"/attempt-2-[^/\n]+\n$", string(used), "HOME is a new directory under HomeDir per attempt")

	got, err := os.ReadFile(settings)
	require.NoError(t, err)
	assert.Equal(t, `{"login":"user"}`, string(got), "the user's config is never written back")
	assert.NoFileExists(t, filepath.Join(realHome, ".x"))
	assert.NoDirExists(t, filepath.Join(realHome, ".config"))
	assert.Empty(t, sb.Home, "the sandbox shared with the checks keeps the real HOME")

	// A check in that sandbox sees the real HOME, read-only.
	res, err := verifier.Run(context.Background(), verifier.Command{Argv: []string{"sh", "-c", `test "$HOME" = "` + realHome + `" && ! echo x > "$HOME/.x"`}, Dir: ws, Sandbox: sb})
	require.NoError(t, err)
	assert.Equal(t, 0, res.ExitCode, res.Output)
	assert.NoFileExists(t, filepath.Join(realHome, ".x"))
}

// TestAgentHomeGoneHoweverTheAttemptEnds: the private home holding the
// copies of the agent's credentials is removed when the agent crashes
// (exits non-zero at once, leaving an unwritable directory behind), times
// out, or is cancelled; and the credential value in the copy is scrubbed
// from what the agent prints.
func TestAgentHomeGoneHoweverTheAttemptEnds(t *testing.T) {
	if err := verifier.SandboxAvailable(); err != nil {
		t.Fatal("the sandbox is a required part of statgraph (.ci/run installs bubblewrap): ", err)
	}
	t.Run("as nobody", func(t *testing.T) { asNobody(t, "TestAgentHomeGoneHoweverTheAttemptEnds") })
	realHome := fakeUserHome(t)
	const token = "ya29.Canary-HomeToken-7f3e91"
	require.NoError(t, os.WriteFile(filepath.Join(realHome, ".fake", "auth.json"), []byte(`{"access_token": "`+token+`"}`), 0o600))
	for _, tc := range []struct {
		name, script string
		timeout      time.Duration
		cancel       bool
	}{
		{"crash", `mkdir -p "$HOME/ro/d" && chmod 500 "$HOME/ro" && cat "$HOME/.fake/auth.json"; exit 3`, 0, false},
		{"timeout", `cat "$HOME/.fake/auth.json"; exec sleep 60`, 2 * time.Second, false},
		{"cancel", `cat "$HOME/.fake/auth.json"; touch started; exec sleep 60`, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			homes := filepath.Join(t.TempDir(), "homes")
			c := CommandExecutor{Argv: []string{"sh", "-c", tc.script}, Workdir: ws, PromptDir: t.TempDir(), Timeout: tc.timeout,
				Sandbox: &verifier.Sandbox{Workspace: ws}, HomeDir: homes, HomeConfig: []string{".fake"}}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan struct{})
			if !tc.cancel {
				close(done)
			} else {
				go func() {
					defer close(done)
					for ctx.Err() == nil {
						if _, err := os.Stat(filepath.Join(ws, "started")); err == nil {
							cancel()
						}
						time.Sleep(10 * time.Millisecond)
					}
				}()
			}
			_, log, _ := c.ExecuteLog(ctx, TaskState{Task: task("h")})
			cancel()
			<-done
			assertNoHomes(t, homes, tc.name)
			assert.Contains(t, log, `"access_token": "`+secret.Marker+`"`, "the agent ran and printed its copied credential, scrubbed")
			assert.NotContains(t, log, token)
		})
	}
}

// TestRemoveStaleHomes: a home whose holder was killed (kill -9 of a
// process holding its lock) is removed by the next sweep; a home still
// held is left alone.
func TestRemoveStaleHomes(t *testing.T) {
	root := t.TempDir()
	held := filepath.Join(root, "1", "attempt-1-held")
	dead := filepath.Join(root, "2", "attempt-3-dead")
	for _, d := range []string{held, dead} {
		require.NoError(t, os.MkdirAll(filepath.Join(d, ".codex"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(d, ".codex", "auth.json"), []byte(`{"token":"x"}`), 0o600))
	}
	holders := map[string]*exec.Cmd{}
	for _, d := range []string{held, dead} {
		// --close: only flock itself holds the lock, not the sleep it runs.
		cmd := exec.Command("flock", "--exclusive", "--close", d, "sleep", "60")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
		holders[d] = cmd
		require.Eventually(t, func() bool {
			f, err := lockDir(d, true)
			if err == nil {
				f.Close()
			}
			return err != nil
		}, 10*time.Second, 10*time.Millisecond, "flock holds %s", d)
	}
	require.NoError(t, RemoveStaleHomes(root))
	assert.DirExists(t, held)
	assert.DirExists(t, dead, "still held")

	require.NoError(t, holders[dead].Process.Signal(os.Kill))
	holders[dead].Wait()
	require.Eventually(t, func() bool {
		require.NoError(t, RemoveStaleHomes(root))
		_, err := os.Stat(dead)
		return os.IsNotExist(err)
	}, 10*time.Second, 50*time.Millisecond, "the killed holder's home is removed")
	assert.DirExists(t, held, "a home in use is left alone")
	assert.NoDirExists(t, filepath.Join(root, "2"), "the task's emptied directory goes too")
}

// TestAgentUnderHostTmpSaysSo: an agent CLI kept under the host's /tmp
// cannot be started in the sandbox (which has its own /tmp); the
// infrastructure error says why instead of only "check its installation".
func TestAgentUnderHostTmpSaysSo(t *testing.T) {
	if err := verifier.SandboxAvailable(); err != nil {
		t.Fatal("the sandbox is a required part of statgraph (.ci/run installs bubblewrap): ", err)
	}
	dir, err := os.MkdirTemp("/tmp", "agent-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	script := filepath.Join(dir, "agent.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\necho hello\n"), 0o755))
	ws := newWorkspace(t, "tmp1", nil)
	c := CommandExecutor{Argv: []string{script}, Workdir: ws.Dir(), PromptDir: t.TempDir(), Workspace: ws,
		Sandbox: &verifier.Sandbox{Workspace: ws.Dir()}}
	_, err = c.Execute(context.Background(), TaskState{Task: task("tmp1")})
	ie, ok := AsInfraError(err)
	require.True(t, ok, "want an infrastructure error, got %v", err)
	assert.Contains(t, ie.Reason, "note: the sandbox gives the command a private, empty /tmp, so "+script)
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
	c.Env = append(c.Env, "OPENAI_BASE_URL=http://127.0.0.1:18080/v1", "ANTHROPIC_BASE_URL=https://gw.example.com/anthropic",
		"OTHER_URL=http://10.0.0.1:9/")
	sb, _, err := c.sandbox(t.TempDir(), 1)
	require.NoError(t, err)
	assert.Equal(t, []string{"proxy.golang.org", "dashscope.aliyuncs.com", "dashscope-intl.aliyuncs.com", "portal.qwen.ai", "chat.qwen.ai",
		"127.0.0.1:18080", "gw.example.com:443"}, sb.AllowHosts)
	assert.Equal(t, []string{"proxy.golang.org"}, shared.AllowHosts, "the checks get only the task's hosts")
	c.Sandbox = &verifier.Sandbox{Workspace: t.TempDir(), Network: true}
	sb, _, err = c.sandbox(t.TempDir(), 1)
	require.NoError(t, err)
	assert.Empty(t, sb.AllowHosts)
}

// TestCopyTreeLinks: a config path that is itself a link to a file is
// followed (the copy holds the file), while links inside a copied
// directory are copied as links, and the copies keep the files' modes.
func TestCopyTreeLinks(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "home")
	require.NoError(t, os.WriteFile(filepath.Join(src, "real.json"), []byte("{}"), 0o640))
	require.NoError(t, os.Symlink(filepath.Join(src, "real.json"), filepath.Join(src, "config.json")))
	require.NoError(t, os.Mkdir(filepath.Join(src, "dir"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(src, "dir", "run.sh"), []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.Symlink("run.sh", filepath.Join(src, "dir", "link")))

	require.NoError(t, copyTree(filepath.Join(src, "config.json"), filepath.Join(dst, "config.json")))
	require.NoError(t, copyTree(filepath.Join(src, "dir"), filepath.Join(dst, "dir")))

	st, err := os.Lstat(filepath.Join(dst, "config.json"))
	require.NoError(t, err)
	assert.True(t, st.Mode().IsRegular(), "a linked config file is copied as a file: %v", st.Mode())
	assert.Equal(t, os.FileMode(0o640), st.Mode().Perm())
	st, err = os.Lstat(filepath.Join(dst, "dir", "run.sh"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), st.Mode().Perm())
	link, err := os.Readlink(filepath.Join(dst, "dir", "link"))
	require.NoError(t, err)
	assert.Equal(t, "run.sh", link)
}
