package tests

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
	"github.com/statgraph/statgraph/internal/gittest"
	"github.com/statgraph/statgraph/internal/proc"
	"github.com/statgraph/statgraph/internal/secret"
)

// probeScript is the test a hostile model writes: it reads the environment
// of every process it can whose environment carries STATGRAPH_LEAK_PROBE
// (statgraph's own, in these tests; the marker keeps the probe away from
// other users' processes on a shared machine) and prints it, base64 (on
// one line and wrapped), hex (on one line and wrapped) and reversed, into
// its output and into found.txt, which the attempt's
// commit then carries. It fails, so its output goes back to the model as
// feedback.
const probeScript = `#!/bin/sh
for f in /proc/[0-9]*/environ; do
  tr '\0' '\n' < "$f" 2>/dev/null | grep -q '^STATGRAPH_LEAK_PROBE=' || continue
  tr '\0' '\n' < "$f" > /tmp/probe.$$ 2>/dev/null
  for sink in /dev/stdout found.txt; do
    { echo "== $f"; cat /tmp/probe.$$; base64 -w0 < /tmp/probe.$$; echo; base64 < /tmp/probe.$$; xxd -p < /tmp/probe.$$; od -An -tx1 < /tmp/probe.$$ | tr -d ' \n'; echo; rev < /tmp/probe.$$; } >> "$sink"
  done
  rm -f /tmp/probe.$$
done
echo "probe done"
exit 1
`

// newCanary returns a key no other test or process uses.
func newCanary(t *testing.T) string {
	t.Helper()
	b := make([]byte, 12)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return "sk-canary-" + hex.EncodeToString(b)
}

// TestAPIKeyReachesNothing runs the built binary with OPENAI_API_KEY set
// and a scripted model whose every attempt writes probeScript as the
// task's test, then looks for the key and its encodings everywhere the
// run left something: the repository's files, the state directory
// (runs.db's bytes included), every commit on every branch, every request
// the model server received, and the binary's output. It does not depend
// on a sandbox: statgraph itself must not hold the key where a child can
// read it.
func TestAPIKeyReachesNothing(t *testing.T) {
	canary := newCanary(t)
	srv := llmtest.NewServer(t)
	srv.SetFallback(func(req openai.ChatCompletionRequest) llmtest.Reply {
		if len(req.Tools) == 0 { // the planner
			return llmtest.Text(`{"summary":"add a test","steps":["write probe.sh"],"files":["probe.sh"],"test_strategy":"sh probe.sh"}`, 10)
		}
		return llmtest.ToolCalls(10, llmtest.WriteFile("probe.sh", probeScript), llmtest.Finish("added probe.sh"))
	})
	dir := newRepo(t, map[string]string{
		"README.md": "a repository\n",
		"tasks.json": `{"tasks": [{"id": 1, "title": "Add a test", "description": "write probe.sh",
			"test_cmd": "sh probe.sh", "max_retries": 2}]}`,
	})
	ctx := t.Context()
	// --no-sandbox: the sandbox gives the check its own pid namespace, so
	// the probe could not see statgraph's /proc/<pid>/environ at all and
	// would prove nothing; this test shows statgraph's own environment no
	// longer holds the key (the re-exec), even to an unconfined check.
	cmd, stdout, stderr := command(ctx, dir, "run", "--plain", noSandbox, "tasks.json")
	cmd.Env = childEnv("OPENAI_API_KEY="+canary, "OPENAI_BASE_URL="+srv.BaseURL(), "STATGRAPH_MODEL="+llmtest.Model, "STATGRAPH_LEAK_PROBE=1")
	res := wait(t, cmd.Run(), stdout, stderr)
	require.Equal(t, 1, res.code, "the probe fails every attempt, so the task fails\nstdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)

	forms := secret.Forms(canary)
	leaks := func(where string, data []byte) {
		t.Helper()
		for _, f := range forms {
			if bytes.Contains(data, []byte(f)) {
				t.Errorf("%s holds the API key (as %q)", where, f)
				return
			}
		}
	}
	history := gittest.Git(t, dir, "log", "-p", "--all")
	require.Contains(t, history, "STATGRAPH_LEAK_PROBE=1", "the probe read statgraph's environment and its found.txt was committed")
	leaks("git log -p --all", []byte(history))
	leaks("stdout", []byte(res.stdout))
	leaks("stderr", []byte(res.stderr))
	for i, b := range srv.RawBodies() {
		leaks("model request "+strconv.Itoa(i+1), []byte(b))
	}
	require.GreaterOrEqual(t, srv.Count(), 3, "planner and two attempts")
	// The repository and the plan's state directory (outside the
	// repository: runs.db, workspaces, prompts).
	plan := planOf(t, dir, "tasks.json", "")
	var files int
	for _, top := range []string{dir, plan.Dir} {
		require.NoError(t, filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files++
			rel, _ := filepath.Rel(top, path)
			leaks(filepath.Join(filepath.Base(top), rel), data)
			return nil
		}))
	}
	assert.FileExists(t, plan.Store())
	t.Logf("searched %d files, %d commits' patches, %d requests", files, strings.Count(history, "\ncommit ")+1, srv.Count())
}

// agentScript stands in for an agent CLI: it records the environment of
// its parent (statgraph: the runner starts it directly) as
// /proc/<ppid>/environ shows it, the parent's pid, and its own
// environment, into the directory $1.
const agentScript = `#!/bin/sh
echo "$PPID" > "$1/statgraph.pid"
if ! tr '\0' '\n' < /proc/$PPID/environ > "$1/statgraph.env"; then echo unreadable > "$1/statgraph.env"; fi
env > "$1/agent.env"
echo "agent done"
`

// TestReexecDropsSecretsFromEnviron: the running statgraph's
// /proc/<pid>/environ names no secret-looking variable although it was
// started with two; the pid its children see is the one the caller
// started (the re-exec replaces the process, it does not fork); and
// --allow-env still hands the named secret to a command executor.
func TestReexecDropsSecretsFromEnviron(t *testing.T) {
	out := t.TempDir()
	dir := newRepo(t, map[string]string{
		"agent.sh": agentScript,
		"tasks.json": `{"tasks": [{"id": 1, "title": "Look around", "test_cmd": "true",
			"executor": {"command": ["sh", "agent.sh", ` + strconv.Quote(out) + `]}}]}`,
	})
	ctx := t.Context()
	// --no-sandbox: the agent must read /proc/$PPID/environ (hidden by the
	// sandbox's pid namespace) and write into out (outside the workspace,
	// read-only in the sandbox) for the test to see what the re-exec left.
	cmd, stdout, stderr := command(ctx, dir, "run", "--plain", noSandbox, "--allow-env", "ANTHROPIC_API_KEY", "tasks.json")
	cmd.Env = childEnv("OPENAI_API_KEY=sk-reexec-openai-canary", "ANTHROPIC_API_KEY=sk-reexec-anthropic-canary", "STATGRAPH_VISIBLE=yes")
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	res := wait(t, cmd.Wait(), stdout, stderr)
	require.Equal(t, 0, res.code, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)

	seen, err := os.ReadFile(filepath.Join(out, "statgraph.pid"))
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(pid), strings.TrimSpace(string(seen)), "statgraph kept the pid it was started with")

	environ, err := os.ReadFile(filepath.Join(out, "statgraph.env"))
	require.NoError(t, err)
	if strings.TrimSpace(string(environ)) == "unreadable" {
		// Not root: PR_SET_DUMPABLE 0 hides the file from other processes
		// of the user, which protects as well but tests less.
		require.NotEqual(t, 0, os.Geteuid(), "root reads any environ; statgraph's must be readable here")
		t.Log("statgraph's environ is unreadable to its children (non-dumpable); the re-exec was not observed")
	} else {
		require.Contains(t, string(environ), "STATGRAPH_VISIBLE=yes", "the environ read is statgraph's")
		for _, line := range strings.Split(string(environ), "\n") {
			name, _, _ := strings.Cut(line, "=")
			assert.False(t, proc.IsSecretName(name), "statgraph's /proc/%d/environ still holds %s", pid, name)
		}
		assert.False(t, strings.Contains(string(environ), "canary"), "statgraph's /proc/%d/environ holds a secret's value", pid)
	}

	agentEnv, err := os.ReadFile(filepath.Join(out, "agent.env"))
	require.NoError(t, err)
	assert.Contains(t, string(agentEnv), "ANTHROPIC_API_KEY=sk-reexec-anthropic-canary\n", "--allow-env passes the named secret to the agent CLI")
	assert.NotContains(t, string(agentEnv), "OPENAI_API_KEY")
	assert.Contains(t, res.stdout, "1 done")

	// The tasks file says so too; the exit code above came through the re-exec.
	var doc struct {
		Tasks []struct {
			Status string `json:"status"`
		} `json:"tasks"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "tasks.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &doc))
	assert.Equal(t, "done", doc.Tasks[0].Status)
}
