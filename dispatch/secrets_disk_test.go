package dispatch_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/internal/secret"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/tasks"
	"github.com/statgraph/statgraph/verifier"
)

// runSandboxed runs the tasks file of repo with the sandbox and returns the
// summary and the run store's path.
func runSandboxed(t *testing.T, repo string, keep bool) (dispatch.Summary, string) {
	t.Helper()
	f, err := tasks.Load(filepath.Join(repo, "tasks.json"), "")
	require.NoError(t, err)
	store := filepath.Join(t.TempDir(), "runs.db")
	st, err := sqlite.Open(context.Background(), store)
	require.NoError(t, err)
	defer st.Close()
	var log bytes.Buffer
	self, err := os.Executable()
	require.NoError(t, err)
	d := &dispatch.Dispatcher{File: f, Checkpointer: st, Jobs: 1, Log: &log, KeepWorkspaces: keep, SandboxHelper: []string{self, "sandbox-init"}}
	sum, err := d.Run(context.Background())
	require.NoError(t, err, log.String())
	return sum, store
}

// showFile returns a file of a branch of repo.
func showFile(t *testing.T, repo, branch, path string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", repo, "show", branch+":"+path).CombinedOutput()
	require.NoError(t, err, "%s:%s: %s", branch, path, out)
	return string(out)
}

// fakeClaude is an agent CLI standing in for claude (its preset copies
// ~/.claude.json into the agent's private home): on its first attempt it
// copies that file into the workspace and fails the check, on its second
// it saves the prompt it was given (with the check's feedback) and passes.
// Both print the credential file.
const fakeClaude = `#!/bin/sh
prompt=$(cat)
echo "$HOME" > home-path.txt
if [ -e attempt1 ]; then
  printf '%s\n' "$prompt" > prompt-2.md
  touch second
else
  cp "$HOME/.claude.json" leak.txt
  touch attempt1
fi
cat "$HOME/.claude.json"
echo done
`

// credentialCheck is the test_cmd of the task fakeClaude works on: it
// tries to read the agent's private home (where the agent said it was, and
// where statgraph kept it before: beside the check's own caches), prints
// the credential the agent copied, and passes on the second attempt.
const credentialCheck = `p=$(cat home-path.txt); for f in "$p/.claude.json" "$(dirname "$GOCACHE")/home/.claude.json"; do if cat "$f"; then echo "READABLE $f"; fi; done; cat leak.txt; test -e second`

// TestAgentCredentialCopies: the agent CLI's copy of its credentials is
// not readable by the task's check and is gone after every attempt; its
// token, printed by the agent and by the check, is scrubbed from the
// check's feedback in the next prompt, from the committed files and from
// the run store; the task's caches and prompts are removed with its
// workspace after the publish.
func TestAgentCredentialCopies(t *testing.T) {
	if err := verifier.SandboxAvailable(); err != nil {
		t.Fatal("the sandbox is a required part of statgraph (.ci/run installs bubblewrap): ", err)
	}
	const token = "sk-ant-oat01-CanaryDiskToken9f27"
	userHome := t.TempDir()
	t.Setenv("HOME", userHome)
	t.Setenv("XDG_CONFIG_HOME", "")
	require.NoError(t, os.WriteFile(filepath.Join(userHome, ".claude.json"), []byte(`{"oauthAccount": {"accessToken": "`+token+`"}}`), 0o600))

	repo := t.TempDir()
	tasksJSON := fmt.Sprintf(`{"tasks": [{"id": 1, "title": "use the credentials", "max_retries": 2,
		"executor": {"preset": "claude"}, "test_cmd": %q}]}`, credentialCheck)
	gitRepo(t, repo, map[string]string{"tasks.json": tasksJSON})
	// The agent CLI lives in the repository, which the sandbox shows
	// (a directory under the host's /tmp would not be visible in it).
	bin := filepath.Join(repo, ".bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "claude"), []byte(fakeClaude), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	plan, err := dispatch.NewPlan(repo, filepath.Join(repo, "tasks.json"), "")
	require.NoError(t, err)

	sum, store := runSandboxed(t, repo, false)
	require.Len(t, sum.Units, 1)
	u := sum.Units[0]
	require.Equal(t, tasks.StatusDone, u.Status, "%+v", u)
	require.Equal(t, 2, u.Attempts)

	prompt := showFile(t, repo, u.Branch, "prompt-2.md")
	assert.Contains(t, prompt, "Verification failed", "the second prompt carries the check's feedback")
	assert.Contains(t, prompt, secret.Marker, "the token the check printed is in the feedback, scrubbed")
	assert.NotContains(t, prompt, token)
	assert.NotContains(t, prompt, "READABLE", "the check could not read the agent's private home")
	assert.Contains(t, showFile(t, repo, u.Branch, "leak.txt"), secret.Marker, "the copied credential is committed scrubbed")
	out, err := exec.Command("git", "-C", repo, "log", "-p", "--all").CombinedOutput()
	require.NoError(t, err)
	assert.NotContains(t, string(out), token, "commits")
	for _, f := range []string{store, store + "-wal"} {
		if b, err := os.ReadFile(f); err == nil {
			assert.False(t, bytes.Contains(b, []byte(token)), "run store %s", f)
		}
	}

	entries, _ := os.ReadDir(plan.HomeDir("1"))
	assert.Empty(t, entries, "no private home is left after the attempts")
	assert.NoDirExists(t, plan.CacheDir("1"), "the task's caches are removed with its workspace")
	assert.NoDirExists(t, plan.UnitPromptDir("1"), "the task's prompts are removed with its workspace")
}

// TestPromptsAndCachesPerTask: task 1 runs after task 2, and neither its
// agent nor its check can read task 2's prompt (kept, with
// KeepWorkspaces); statgraph clean then removes both tasks' caches and
// prompts, the caches of a task no longer in the file, and a private home
// a killed run left.
func TestPromptsAndCachesPerTask(t *testing.T) {
	if err := verifier.SandboxAvailable(); err != nil {
		t.Fatal("the sandbox is a required part of statgraph (.ci/run installs bubblewrap): ", err)
	}
	repo := t.TempDir()
	plan, err := dispatch.NewPlan(repo, filepath.Join(repo, "tasks.json"), "")
	require.NoError(t, err)
	// Where task 2's prompt is now, and where it was when all tasks shared
	// one prompt directory.
	read := fmt.Sprintf(`for f in %s %s; do if cat "$f"; then echo READ >> read.txt; fi; done; true`,
		filepath.Join(plan.UnitPromptDir("2"), "task-2-attempt-1.md"), filepath.Join(plan.PromptDir(), "task-2-attempt-1.md"))
	tasksJSON := fmt.Sprintf(`{"tasks": [
		{"id": 1, "title": "one", "dependencies": [2], "max_retries": 1,
		 "executor": {"command": ["sh", "-c", %q]}, "test_cmd": "for f in %s/task-2-attempt-1.md %s/task-2-attempt-1.md; do if cat $f; then exit 1; fi; done"},
		{"id": 2, "title": "two: SECRET-PLAN-OF-TASK-2", "max_retries": 1, "executor": {"command": ["true"]}, "test_cmd": "true"}]}`,
		read, plan.UnitPromptDir("2"), plan.PromptDir())
	gitRepo(t, repo, map[string]string{"tasks.json": tasksJSON})

	sum, _ := runSandboxed(t, repo, true)
	require.Len(t, sum.Units, 2)
	for _, u := range sum.Units {
		require.Equal(t, tasks.StatusDone, u.Status, "task %s: %+v", u.ID, u)
	}
	require.FileExists(t, filepath.Join(plan.UnitPromptDir("2"), "task-2-attempt-1.md"), "task 2's prompt is kept with its workspace")
	out, _ := exec.Command("git", "-C", repo, "show", sum.Units[0].Branch+":read.txt").CombinedOutput()
	assert.Contains(t, string(out), "does not exist", "task 1's agent read no prompt of task 2: %s", out)
	for _, id := range []string{"1", "2"} {
		require.DirExists(t, plan.CacheDir(id), "kept with the workspace")
	}

	// What a removed task and a killed run leave behind.
	require.NoError(t, os.MkdirAll(filepath.Join(plan.CacheDir("99"), "gomod"), 0o755))
	stale := filepath.Join(plan.HomeDir("1"), "attempt-1-killed")
	require.NoError(t, os.MkdirAll(stale, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(stale, ".claude.json"), []byte(`{"token": "x"}`), 0o600))

	f, err := tasks.Load(filepath.Join(repo, "tasks.json"), "")
	require.NoError(t, err)
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "runs.db"))
	require.NoError(t, err)
	defer st.Close()
	res, err := (&dispatch.Dispatcher{File: f, Checkpointer: st}).Clean(context.Background())
	require.NoError(t, err)
	for _, id := range []string{"1", "2", "99"} {
		assert.NoDirExists(t, plan.CacheDir(id), "clean removes task %s's caches", id)
		assert.NoDirExists(t, plan.UnitPromptDir(id), "clean removes task %s's prompts", id)
	}
	assert.NoDirExists(t, stale, "clean removes a private home a killed run left")
	assert.Positive(t, res.Caches["1"]+res.Caches["2"], "clean reports what the caches freed: %+v", res.Caches)
	assert.True(t, strings.Contains(fmt.Sprint(res.Workspaces), "1"), "the workspaces go too: %+v", res.Workspaces)
}
