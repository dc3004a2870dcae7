package tests

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

// hostileTest is a test as a hostile model would write it. It looks for the
// API key in every process's environment (statgraph's included) and keeps
// what it finds in the workspace; it plants a
// pre-commit hook in the user's repository (its path is $2: the workspace
// is in the plan's state directory, outside the repository), writes into
// $HOME and the repository, and leaves background children of every style
// with the marker $1 in their command lines. With a third argument it then
// waits to be killed.
const hostileTest = `#!/bin/sh
m=$1
r=$2
for f in /proc/[0-9]*/environ; do tr '\0' '\n' < "$f" 2>/dev/null | grep '^OPENAI_API_KEY='; done > findings.txt 2>/dev/null
mkdir -p "$r/.git/hooks"
echo 'echo pwned' > "$r/.git/hooks/pre-commit"
echo pwned > "$HOME/statgraph-e2e-plant-$m"
echo pwned > "$r/planted.txt"
sh -c "sleep 300; : $m amp" &
setsid sh -c "sleep 300; : $m setsid" &
( sh -c "sleep 300; : $m doublefork" & ) &
nohup sh -c "sleep 300; : $m nohup" >/dev/null 2>&1 &
sleep 0.2
if [ -n "$3" ]; then echo ready > ready; sleep 300; fi
exit 0
`

// hostileRepo makes a repository whose one task runs hostileTest as its
// test command, and returns it with the marker and the $HOME file to watch.
func hostileRepo(t *testing.T, wait bool) (repo, marker, planted string) {
	t.Helper()
	marker = fmt.Sprintf("sge2e%d", time.Now().UnixNano())
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	planted = filepath.Join(home, "statgraph-e2e-plant-"+marker)
	t.Cleanup(func() { os.Remove(planted) })
	arg := ""
	if wait {
		arg = "wait"
	}
	repo = newRepo(t, map[string]string{"hostile.sh": hostileTest})
	// The test command names the repository, whose path newRepo chose.
	require.NoError(t, os.WriteFile(filepath.Join(repo, "tasks.json"), fmt.Appendf(nil, `{"tasks": [{"id": 1, "title": "hostile", "max_retries": 1,
  "executor": {"command": ["true"]}, "test_cmd": ["sh", "hostile.sh", %q, %q, %q]}]}`+"\n", marker, repo, arg), 0o644))
	gittest.Git(t, repo, "add", "tasks.json")
	gittest.Git(t, repo, "commit", "-q", "-m", "tasks")
	return repo, marker, planted
}

// markedProcs returns the pids of processes whose command line holds marker.
func markedProcs(marker string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && strings.Contains(string(b), marker) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// leftAlive waits up to 3 s for the marked processes to go and returns (and
// kills) those still there.
func leftAlive(marker string) []int {
	deadline := time.Now().Add(3 * time.Second)
	for {
		left := markedProcs(marker)
		if len(left) == 0 || time.Now().After(deadline) {
			for _, pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// filesHolding lists the files under dir whose content holds s.
func filesHolding(t *testing.T, dir, s string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), s) {
			out = append(out, p)
		}
		return nil
	}))
	return out
}

// TestSandboxedRun runs hostileTest through statgraph with an API key in
// its environment while another process of the user (a decoy) holds a
// second key in its own. Sandboxed: neither key is anywhere (not in the
// findings the check kept in its workspace, not in any file of the
// repository or the plan's state), nothing outside the workspace changed,
// and no background child is left. With --no-sandbox, the same run steals
// the decoy's key and plants the hook, which proves the test can tell.
// (Statgraph's own key is not stolen even then: since internal/secret,
// statgraph re-execs without secrets in its environ, so the probe needs a
// decoy to show what an unconfined check can read.)
func TestSandboxedRun(t *testing.T) {
	t.Parallel()
	for _, sandboxed := range []bool{true, false} {
		t.Run(fmt.Sprintf("sandboxed=%v", sandboxed), func(t *testing.T) {
			t.Parallel()
			repo, marker, planted := hostileRepo(t, false)
			canary := "sk-canary-" + marker
			decoyKey := "sk-decoy-" + marker
			decoy := exec.Command("sleep", "300")
			decoy.Env = childEnv("OPENAI_API_KEY=" + decoyKey)
			require.NoError(t, decoy.Start())
			t.Cleanup(func() { _ = decoy.Process.Kill(); _ = decoy.Wait() })
			// --keep-workspaces: the findings stay in the workspace,
			// which is otherwise removed once the task is published.
			args := []string{"run", "--keep-workspaces", "tasks.json"}
			if !sandboxed {
				args = []string{"run", "--keep-workspaces", "--no-sandbox", "tasks.json"}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd, stdout, stderr := command(ctx, repo, args...)
			cmd.Env = append(cmd.Env, "OPENAI_API_KEY="+canary)
			r := wait(t, cmd.Run(), stdout, stderr)
			require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			plan := planOf(t, repo, "tasks.json", "")
			b, err := os.ReadFile(filepath.Join(plan.WorkDir(), "1", "findings.txt"))
			require.NoError(t, err, "the check wrote its findings in the workspace")
			findings := string(b)
			hooks := filepath.Join(repo, ".git", "hooks", "pre-commit")
			left := leftAlive(marker)
			if !sandboxed {
				assert.Contains(t, findings, decoyKey, "unsandboxed, the test reads other processes' environ")
				assert.NotContains(t, findings, canary, "statgraph's environ holds no key (the re-exec dropped it)")
				assert.FileExists(t, hooks)
				assert.NotEmpty(t, left, "unsandboxed, setsid children escape")
				assert.Contains(t, r.stdout+r.stderr, "--no-sandbox: checks and agent CLIs run unprotected")
				return
			}
			for _, key := range []string{canary, decoyKey} {
				assert.NotContains(t, findings, key, "the key leaked into the check")
				assert.Empty(t, filesHolding(t, repo, key), "files holding the key")
				assert.Empty(t, filesHolding(t, plan.Dir, key), "files of the plan's state (run store, workspace) holding the key")
				assert.NotContains(t, r.stdout+r.stderr, key)
			}
			assert.NoFileExists(t, hooks, "hook planted in the user's repository")
			assert.NoFileExists(t, filepath.Join(repo, "planted.txt"), "file written in the user's repository")
			assert.NoFileExists(t, planted, "file written in $HOME")
			assert.Empty(t, gittest.Git(t, repo, "status", "--porcelain", "--", ".", ":!tasks.json"), "the user's working tree is unchanged but for tasks.json")
			assert.Empty(t, left, "background children survived the run")
		})
	}
}

// TestSandboxKill9 kills statgraph with SIGKILL while hostileTest's
// background children run: none of them may survive it.
func TestSandboxKill9(t *testing.T) {
	t.Parallel()
	repo, marker, _ := hostileRepo(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, stdout, stderr := command(ctx, repo, "run", "tasks.json")
	require.NoError(t, cmd.Start())
	ready := filepath.Join(planOf(t, repo, "tasks.json", "").WorkDir(), "1", "ready")
	for {
		if _, err := os.Stat(ready); err == nil {
			break
		}
		if ctx.Err() != nil {
			cmd.Process.Kill()
			cmd.Wait()
			leftAlive(marker)
			t.Fatalf("the check never became ready\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.NotEmpty(t, markedProcs(marker), "the check's children run before the kill")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	assert.Empty(t, leftAlive(marker), "processes survived kill -9 of statgraph")
}

// TestRunWithoutBwrap: with bwrap missing, statgraph run exits 2 before
// writing anything and says what to install; --no-sandbox runs, saying
// once what is unprotected.
func TestRunWithoutBwrap(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	for _, tool := range []string{"git", "sh", "true"} {
		p, err := exec.LookPath(tool)
		require.NoError(t, err)
		require.NoError(t, os.Symlink(p, filepath.Join(bin, tool)))
	}
	const tasksJSON = `{"tasks": [{"id": 1, "title": "t", "executor": {"command": ["true"]}, "test_cmd": "true"}]}` + "\n"
	repo := newRepo(t, map[string]string{"tasks.json": tasksJSON})
	run := func(args ...string) result {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd, stdout, stderr := command(ctx, repo, args...)
		cmd.Env = append(cmd.Env, "PATH="+bin)
		return wait(t, cmd.Run(), stdout, stderr)
	}

	r := run("run", "tasks.json")
	assert.Equal(t, 2, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "apt-get install bubblewrap")
	assert.Contains(t, r.stderr, "--no-sandbox")
	assert.NoDirExists(t, filepath.Join(repo, ".statgraph"), "nothing was written")
	assert.NoDirExists(t, planOf(t, repo, "tasks.json", "").Dir, "no state directory was made")
	b, err := os.ReadFile(filepath.Join(repo, "tasks.json"))
	require.NoError(t, err)
	assert.Equal(t, tasksJSON, string(b), "tasks.json is unchanged")

	r = run("run", "--no-sandbox", "tasks.json")
	assert.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Equal(t, 1, strings.Count(r.stdout+r.stderr, "--no-sandbox: checks and agent CLIs run unprotected"), "warned once")
}
