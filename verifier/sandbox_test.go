package verifier

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

// requireSandbox fails (not skips) the test when bubblewrap cannot run: the
// sandbox is a required part of statgraph, and .ci/run installs it.
func requireSandbox(t testing.TB) {
	t.Helper()
	require.NoError(t, SandboxAvailable(), "the sandbox tests need bubblewrap (apt-get install bubblewrap)")
}

// userRepo makes a user's repository with statgraph's layout inside it: the
// state directory <repo>/.statgraph with a run store, and a task's
// workspace cloned at <repo>/.statgraph/work/1. It returns the repository,
// the workspace and the sandbox statgraph gives a check of that task.
func userRepo(t testing.TB) (repo, ws string, sb *Sandbox) {
	t.Helper()
	repo = gittest.Repo(t, map[string]string{"README": "user's repo\n"})
	state := filepath.Join(repo, ".statgraph")
	require.NoError(t, os.MkdirAll(filepath.Join(state, "work"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(state, "runs.db"), []byte("run store\n"), 0o644))
	ws = filepath.Join(state, "work", "1")
	gittest.Git(t, repo, "clone", "-q", repo, ws)
	return repo, ws, &Sandbox{
		Workspace: ws,
		ReadOnly:  []string{repo, filepath.Join(ws, ".git")},
		Hide:      []string{state},
		CacheDir:  filepath.Join(state, "cache", "1"),
		Network:   true,
	}
}

// hostileCheck is a model-written test as an attacker would write it: it
// looks for the canary in every process's environment, plants git hooks in
// the user's repository and in the workspace's .git, and writes into $HOME,
// the user's repository and the run store.
const hostileCheck = `
for f in /proc/[0-9]*/environ; do tr "\\0" "\\n" < "$f" 2>/dev/null | grep "^SANDBOX_CANARY_KEY="; done 2>/dev/null
mkdir -p ../../../.git/hooks
printf '#!/bin/sh\necho pwned\n' > ../../../.git/hooks/pre-commit
printf '#!/bin/sh\necho pwned\n' > .git/hooks/pre-commit
echo pwned > "$HOME/$1"
echo pwned > ../../../planted.txt
echo pwned > ../../runs.db
echo tmp > "$TMPDIR/scratch" && cat "$TMPDIR/scratch"
echo ok > inside.txt
cat ../../../README
exit 0
`

// TestSandboxConfinesHostileCheck runs hostileCheck from a parent process
// whose environment holds a canary secret, as statgraph's holds the API key:
// unsandboxed the attacks work (proving the test can detect them), sandboxed
// nothing outside the workspace changes and the canary is never seen.
func TestSandboxConfinesHostileCheck(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	home, err := os.UserHomeDir()
	require.NoError(t, err)

	attack := func(t *testing.T, sandboxed bool) (out, canary, repo, ws, planted string) {
		repo, ws, _ = userRepo(t)
		canary = fmt.Sprintf("canary-%d", time.Now().UnixNano())
		plant := fmt.Sprintf("statgraph-sandbox-plant-%d", time.Now().UnixNano())
		planted = filepath.Join(home, plant)
		t.Cleanup(func() { os.Remove(planted) })
		parent := helper(ws, hostileCheck, sandboxed, plant)
		parent.Env = append(parent.Env, "SANDBOX_CANARY_KEY="+canary)
		b, err := parent.CombinedOutput()
		require.NoError(t, err, "%s", b)
		return string(b), canary, repo, ws, planted
	}

	t.Run("unsandboxed, the attacks work", func(t *testing.T) {
		t.Parallel()
		out, canary, repo, ws, planted := attack(t, false)
		assert.Contains(t, out, canary, "the check read the canary from the parent's environ")
		assert.FileExists(t, filepath.Join(repo, ".git", "hooks", "pre-commit"))
		assert.FileExists(t, filepath.Join(ws, ".git", "hooks", "pre-commit"))
		assert.FileExists(t, filepath.Join(repo, "planted.txt"))
		assert.FileExists(t, planted)
	})

	t.Run("sandboxed, nothing outside the workspace changes", func(t *testing.T) {
		t.Parallel()
		out, canary, repo, ws, planted := attack(t, true)
		assert.NotContains(t, out, canary, "the canary leaked into the check")
		assert.NoFileExists(t, filepath.Join(repo, ".git", "hooks", "pre-commit"), "hook planted in the user's repository")
		assert.NoFileExists(t, filepath.Join(ws, ".git", "hooks", "pre-commit"), "hook planted in the workspace's .git")
		assert.NoFileExists(t, filepath.Join(repo, "planted.txt"), "file written in the user's repository")
		assert.NoFileExists(t, planted, "file written in $HOME")
		db, err := os.ReadFile(filepath.Join(repo, ".statgraph", "runs.db"))
		require.NoError(t, err)
		assert.Equal(t, "run store\n", string(db), "the run store changed")
		inside, err := os.ReadFile(filepath.Join(ws, "inside.txt"))
		require.NoError(t, err, "the workspace is writable")
		assert.Equal(t, "ok\n", string(inside))
		assert.Contains(t, out, "tmp\n", "the private TMPDIR is writable")
		assert.Contains(t, out, "user's repo\n", "the user's repository is readable")
	})
}

// marked returns the pids of processes whose command line holds marker.
func marked(marker string) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), marker) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// survivors waits up to 3 s for every process holding marker to go, and
// returns those still there; it kills them so that a failing test leaves
// nothing behind.
func survivors(t testing.TB, marker string) []string {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		left := marked(marker)
		if len(left) == 0 || time.Now().After(deadline) {
			for _, p := range left {
				var pid int
				fmt.Sscan(p, &pid)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// escapeScript starts background children in every style, each a shell
// whose command line holds the marker ($1), then exits (or, with a second
// argument, writes that file and waits to be killed).
const escapeScript = `
m=$1
sh -c "sleep 300; : $m amp" &
setsid sh -c "sleep 300; : $m setsid" &
( sh -c "sleep 300; : $m doublefork" & ) &
nohup sh -c "sleep 300; : $m nohup" >/dev/null 2>&1 &
sleep 0.2
if [ -n "$2" ]; then echo ready > "$2"; sleep 300; fi
exit 0
`

// TestSandboxLeavesNoProcesses: after a check that started background
// children of every style ends normally, none of them is left; without the
// sandbox the setsid and double-forked ones escape.
func TestSandboxLeavesNoProcesses(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	for _, sandboxed := range []bool{false, true} {
		t.Run(fmt.Sprintf("sandboxed=%v", sandboxed), func(t *testing.T) {
			_, ws, sb := userRepo(t)
			marker := fmt.Sprintf("sgmark%d", time.Now().UnixNano())
			c := Command{Argv: []string{"sh", "-c", escapeScript, "sh", marker}, Dir: ws, Timeout: time.Minute, Grace: 200 * time.Millisecond}
			if sandboxed {
				c.Sandbox = sb
			}
			res, err := Run(context.Background(), c)
			require.NoError(t, err)
			require.Equal(t, 0, res.ExitCode, res.Output)
			left := survivors(t, marker)
			if sandboxed {
				assert.Empty(t, left, "background children survived the sandboxed check")
			} else {
				assert.NotEmpty(t, left, "without the sandbox a setsid child escapes (proves the test can fail)")
			}
		})
	}
}

// TestSandboxTimeoutLeavesNoProcesses: a sandboxed check that times out,
// or whose context is cancelled, while its background children run leaves
// none of them.
func TestSandboxTimeoutLeavesNoProcesses(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	for _, how := range []string{"timeout", "cancel"} {
		t.Run(how, func(t *testing.T) {
			_, ws, sb := userRepo(t)
			marker := fmt.Sprintf("sgstop%d", time.Now().UnixNano())
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := Command{Argv: []string{"sh", "-c", escapeScript, "sh", marker, filepath.Join(ws, "ready")}, Dir: ws, Sandbox: sb, Grace: 200 * time.Millisecond}
			if how == "timeout" {
				c.Timeout = 2 * time.Second
			} else {
				go func() {
					for len(marked(marker)) < 4 && ctx.Err() == nil {
						time.Sleep(20 * time.Millisecond)
					}
					cancel()
				}()
			}
			res, err := Run(ctx, c)
			require.NoError(t, err)
			assert.True(t, res.TimedOut || res.Canceled, "%+v", res)
			// Checked at once: Run returns only when they are gone.
			assert.Empty(t, marked(marker), "background children outlived Run after the %s", how)
			assert.Empty(t, survivors(t, marker), "background children survived the %s", how)
		})
	}
}

// TestSandboxParentHelper is the parent process of the tests that need a
// parent of their own (a canary in its environment as exec'd, or a kill -9):
// it runs sh -c $SANDBOX_HELPER_SCRIPT with the arguments in
// $SANDBOX_HELPER_ARGS (split on spaces) in the workspace $SANDBOX_HELPER_WS,
// sandboxed like a statgraph check unless $SANDBOX_HELPER_OFF is set, and
// prints its output. It does nothing in a normal test run.
func TestSandboxParentHelper(t *testing.T) {
	ws := os.Getenv("SANDBOX_HELPER_WS")
	if ws == "" {
		return
	}
	c := Command{Argv: append([]string{"sh", "-c", os.Getenv("SANDBOX_HELPER_SCRIPT"), "sh"}, strings.Fields(os.Getenv("SANDBOX_HELPER_ARGS"))...), Dir: ws}
	if os.Getenv("SANDBOX_HELPER_OFF") == "" {
		state := filepath.Dir(filepath.Dir(ws))
		c.Sandbox = &Sandbox{Workspace: ws, ReadOnly: []string{filepath.Dir(state), filepath.Join(ws, ".git")}, Hide: []string{state},
			CacheDir: filepath.Join(state, "cache", "1"), Network: true}
	}
	res, err := Run(context.Background(), c)
	require.NoError(t, err)
	fmt.Print(res.Output)
}

// helper returns the command that runs TestSandboxParentHelper.
func helper(ws, script string, sandboxed bool, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run", "^TestSandboxParentHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "SANDBOX_HELPER_WS="+ws, "SANDBOX_HELPER_SCRIPT="+script, "SANDBOX_HELPER_ARGS="+strings.Join(args, " "))
	if !sandboxed {
		cmd.Env = append(cmd.Env, "SANDBOX_HELPER_OFF=1")
	}
	return cmd
}

// TestSandboxSurvivesKill9: kill -9 of the process running a sandboxed
// check leaves none of the check's processes alive; unsandboxed, they all
// survive.
func TestSandboxSurvivesKill9(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	for _, sandboxed := range []bool{false, true} {
		t.Run(fmt.Sprintf("sandboxed=%v", sandboxed), func(t *testing.T) {
			_, ws, _ := userRepo(t)
			marker := fmt.Sprintf("sgkill%d", time.Now().UnixNano())
			ready := filepath.Join(ws, "ready")
			parent := helper(ws, escapeScript, sandboxed, marker, ready)
			require.NoError(t, parent.Start())
			deadline := time.Now().Add(30 * time.Second)
			for {
				if _, err := os.Stat(ready); err == nil {
					break
				}
				if time.Now().After(deadline) {
					parent.Process.Kill()
					parent.Wait()
					survivors(t, marker)
					t.Fatal("the check in the helper never became ready")
				}
				time.Sleep(10 * time.Millisecond)
			}
			require.NotEmpty(t, marked(marker), "the background children are running before the kill")
			require.NoError(t, parent.Process.Signal(syscall.SIGKILL))
			_ = parent.Wait()
			left := survivors(t, marker)
			if sandboxed {
				assert.Empty(t, left, "processes survived kill -9 of the parent")
			} else {
				assert.NotEmpty(t, left, "without the sandbox they survive (proves the test can fail)")
			}
		})
	}
}

// TestSandboxDialHelper connects to $SANDBOX_DIAL and exits 0 on success;
// it does nothing in a normal test run.
func TestSandboxDialHelper(t *testing.T) {
	addr := os.Getenv("SANDBOX_DIAL")
	if addr == "" {
		return
	}
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		fmt.Println("dial:", err)
		os.Exit(3)
	}
	c.Close()
	fmt.Println("connected")
	os.Exit(0)
}

// TestSandboxNetwork: with Network off a check cannot reach a listener on
// the host's 127.0.0.1 (the sandbox has its own loopback); with it on, it
// can.
func TestSandboxNetwork(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	self, err := filepath.Abs(os.Args[0])
	require.NoError(t, err)
	for _, network := range []bool{true, false} {
		t.Run(fmt.Sprintf("network=%v", network), func(t *testing.T) {
			ws := t.TempDir()
			res, err := Run(context.Background(), Command{
				Argv: []string{self, "-test.run", "^TestSandboxDialHelper$"}, Dir: ws, Timeout: time.Minute,
				Env:     []string{"SANDBOX_DIAL=" + ln.Addr().String()},
				Sandbox: &Sandbox{Workspace: ws, ReadOnly: []string{self}, Network: network},
			})
			require.NoError(t, err)
			if network {
				assert.Equal(t, 0, res.ExitCode, res.Output)
				assert.Contains(t, res.Output, "connected")
			} else {
				assert.Equal(t, 3, res.ExitCode, res.Output)
				assert.Contains(t, res.Output, "refused")
			}
		})
	}
}

// TestSandboxAvailableWithoutBwrap: with bwrap off PATH the error says what
// to install, and a sandboxed Run refuses to start.
func TestSandboxAvailableWithoutBwrap(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	err := SandboxAvailable()
	require.ErrorIs(t, err, ErrSandboxUnavailable)
	assert.Contains(t, err.Error(), "apt-get install bubblewrap")
	assert.Contains(t, err.Error(), "--no-sandbox")
	ws := t.TempDir()
	_, err = Run(context.Background(), Command{Argv: []string{"/bin/true"}, Dir: ws, Sandbox: &Sandbox{Workspace: ws}})
	require.ErrorIs(t, err, ErrSandboxUnavailable)
}

// TestSandboxGoCaches: go builds inside the sandbox write only the task's
// private build cache (the user's GOCACHE is never written) and read the
// user's module cache at its own path, read-only.
func TestSandboxGoCaches(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	_, ws, sb := userRepo(t)
	res, err := Run(context.Background(), Command{Shell: "go env GOCACHE GOMODCACHE GOFLAGS; echo $TMPDIR; touch \"$(go env GOMODCACHE)/planted\" && echo planted; true", Dir: ws, Sandbox: sb, Timeout: time.Minute})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, res.Output)
	lines := strings.Split(strings.TrimSpace(res.Output), "\n")
	require.GreaterOrEqual(t, len(lines), 4, res.Output)
	assert.Equal(t, filepath.Join(sb.CacheDir, "go-build"), lines[0])
	if mod := userModCache(); mod != "" {
		assert.Equal(t, mod, lines[1], "the user's module cache, at its own path")
		assert.NoFileExists(t, filepath.Join(mod, "planted"))
		assert.NotContains(t, res.Output, "\nplanted")
	} else {
		assert.Equal(t, filepath.Join(sb.CacheDir, "gomod"), lines[1])
	}
	assert.Contains(t, lines[2], "-modcacherw")
	assert.Equal(t, "/tmp", lines[3])
}
