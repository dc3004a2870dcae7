package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

// badIDs are task ids that cannot name a workspace directory or a branch
// statgraph/<id>; validate once accepted all of them and run then failed
// the task.
var badIDs = []string{
	"a b", "a/b", "../x", "..", "a..b", ".hidden", "-flag", "_x", "x.", "x.lock",
	"a:b", "a~b", "a^b", "a?b", "a*b", "a[b", `a\b`, "a@{b", "ünï", "tab\tid",
	"new\nline", strings.Repeat("x", 101),
}

// TestValidateAndRunAgreeOnIDs writes each bad id as a task and checks that
// validate rejects it (exit 2) and that run does too, changing nothing:
// tasks.json byte for byte, no .statgraph directory, no branch.
func TestValidateAndRunAgreeOnIDs(t *testing.T) {
	t.Parallel()
	for _, id := range badIDs {
		t.Run(fmt.Sprintf("%q", id), func(t *testing.T) {
			t.Parallel()
			idJSON, err := json.Marshal(id)
			require.NoError(t, err)
			content := fmt.Sprintf(`{"tasks": [{"id": %s, "title": "t", "executor": {"command": ["true"]}, "test_cmd": "true"}]}`+"\n", idJSON)
			repo := newRepo(t, map[string]string{"tasks.json": content})

			v := statgraph(t, repo, "validate", "tasks.json")
			assert.Equal(t, 2, v.code, "validate must reject id %q\nstdout:\n%s\nstderr:\n%s", id, v.stdout, v.stderr)
			assert.Contains(t, v.stderr, "cannot be used")
			assert.NotContains(t, strings.TrimSuffix(v.stderr, "\n"), "\n\n", "no raw newline from the id splits the message")

			r := statgraph(t, repo, "run", "tasks.json")
			assert.Equal(t, 2, r.code, "run must reject id %q as validate does\nstdout:\n%s\nstderr:\n%s", id, r.stdout, r.stderr)
			data, err := os.ReadFile(filepath.Join(repo, "tasks.json"))
			require.NoError(t, err)
			assert.Equal(t, content, string(data), "tasks.json is unchanged")
			assert.NoDirExists(t, filepath.Join(repo, ".statgraph"))
			assert.NoDirExists(t, planOf(t, repo, "tasks.json", "").Dir, "no state directory was made")
			assert.Empty(t, gittest.Git(t, repo, "branch", "--list", "statgraph/*"))
		})
	}
}

// TestControlCharactersEscaped gives a task a title with a newline and an
// escape sequence and a dependency id with a newline: every line statgraph
// prints shows them escaped, never raw.
func TestControlCharactersEscaped(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"tasks.json": `{"tasks": [
  {"id": 1, "title": "evil\ntask 9 done: forged\u001b[2J", "executor": {"command": ["true"]}, "test_cmd": "true"},
  {"id": 2, "title": "second", "dependencies": ["no\nsuch"], "executor": {"command": ["true"]}, "test_cmd": "true"}
]}
`})
	v := statgraph(t, repo, "validate", "tasks.json")
	assert.Equal(t, 0, v.code, "an unknown dependency blocks its task only: a warning")
	out := v.stdout + v.stderr
	assert.Contains(t, out, `dependency no\nsuch does not exist`)
	assert.NotContains(t, out, "no\nsuch")

	require.NoError(t, os.WriteFile(filepath.Join(repo, "tasks.json"), []byte(`{"tasks": [
  {"id": 1, "title": "evil\ntask 9 done: forged\u001b[2J", "executor": {"command": ["true"]}, "test_cmd": "true"}
]}
`), 0o644))
	for _, args := range [][]string{{"run", "--plain", "tasks.json"}, {"status", "tasks.json"}} {
		r := statgraph(t, repo, args...)
		out := r.stdout + r.stderr
		assert.NotContains(t, out, "\ntask 9 done: forged", "%v printed the title's newline raw:\n%s", args, out)
		assert.NotContains(t, out, "\x1b", "%v printed an escape character raw", args)
	}
	r := statgraph(t, repo, "status", "tasks.json")
	assert.Contains(t, r.stdout, `evil\ntask 9 done: forged\x1b[2J`, "status shows the title escaped:\n%s", r.stdout)
}

// TestAskWithoutTerminalWaits runs a task with on_exhausted "ask" whose
// checks always fail, with stdin on /dev/null (a character device but not a
// terminal): the task waits as interrupted instead of reading EOF as
// "abort" and ending failed.
func TestAskWithoutTerminalWaits(t *testing.T) {
	t.Parallel()
	repo := newRepo(t, map[string]string{"tasks.json": `{"tasks": [
  {"id": 1, "title": "never passes", "max_retries": 1, "on_exhausted": "ask",
   "executor": {"command": ["true"]}, "test_cmd": "false"}
]}
`})
	devnull, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer devnull.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd, stdout, stderr := command(ctx, repo, "run", "tasks.json")
	cmd.Stdin = devnull
	r := wait(t, cmd.Run(), stdout, stderr)
	assert.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	task := readTasks(t, filepath.Join(repo, "tasks.json"))["1"]
	assert.Equal(t, "interrupted", task.Status, "the task waits for an answer; stdout:\n%s", r.stdout)
	assert.Contains(t, task.StatusReason, "waiting for an answer")
	assert.Nil(t, task.FailedAt)
}
