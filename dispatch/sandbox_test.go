package dispatch_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/tasks"
	"github.com/statgraph/statgraph/verifier"
)

// plantingTasks is a tasks file whose test command, written as a model
// would write a hostile test, plants a pre-commit hook in the user's
// repository and a file beside tasks.json, by absolute path (%[1]s: the
// workspace lives outside the repository, but its origin names it), then
// passes.
const plantingTasks = `{"tasks": [{"id": 1, "title": "plant", "max_retries": 1,
  "executor": {"command": ["true"]},
  "test_cmd": "mkdir -p %[1]s/.git/hooks; echo 'echo pwned' > %[1]s/.git/hooks/pre-commit; echo pwned > %[1]s/planted.txt; true"}]}`

// runDispatcher runs the tasks file in a fresh repository and returns the
// repository, what the dispatcher logged, and Run's error.
func runDispatcher(t *testing.T, noSandbox bool) (string, string, error) {
	t.Helper()
	dir := t.TempDir()
	gitRepo(t, dir, map[string]string{"tasks.json": fmt.Sprintf(plantingTasks, dir)})
	f, err := tasks.Load(filepath.Join(dir, "tasks.json"), "")
	require.NoError(t, err)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "runs.db"))
	require.NoError(t, err)
	defer st.Close()
	var log bytes.Buffer
	d := &dispatch.Dispatcher{File: f, Checkpointer: st, Jobs: 1, Log: &log, NoSandbox: noSandbox}
	sum, err := d.Run(ctx)
	if err == nil {
		require.Len(t, sum.Units, 1)
		require.Equal(t, tasks.StatusDone, sum.Units[0].Status, "%+v", sum.Units[0])
	}
	return dir, log.String(), err
}

// TestDispatcherSandboxesChecks: through the dispatcher, a check cannot
// write outside its workspace; with NoSandbox it can, and the run says so
// once.
func TestDispatcherSandboxesChecks(t *testing.T) {
	t.Run("sandboxed", func(t *testing.T) {
		repo, log, err := runDispatcher(t, false)
		require.NoError(t, err)
		assert.NoFileExists(t, filepath.Join(repo, ".git", "hooks", "pre-commit"))
		assert.NoFileExists(t, filepath.Join(repo, "planted.txt"))
		assert.NotContains(t, log, "--no-sandbox")
	})
	t.Run("no sandbox", func(t *testing.T) {
		repo, log, err := runDispatcher(t, true)
		require.NoError(t, err)
		assert.FileExists(t, filepath.Join(repo, ".git", "hooks", "pre-commit"), "unprotected, as the warning says")
		assert.Equal(t, 1, strings.Count(log, "warning: --no-sandbox"), "warned once: %s", log)
	})
}

// TestDispatcherWithoutBwrap: with bwrap missing from PATH the dispatcher
// refuses to run, changing nothing and saying what to install; with
// NoSandbox it runs and warns once.
func TestDispatcherWithoutBwrap(t *testing.T) {
	bin := t.TempDir()
	for _, tool := range []string{"git", "sh", "true", "mkdir", "echo"} {
		p, err := exec.LookPath(tool)
		require.NoError(t, err)
		require.NoError(t, os.Symlink(p, filepath.Join(bin, tool)))
	}
	t.Setenv("PATH", bin)

	repo, _, err := runDispatcher(t, false)
	require.ErrorIs(t, err, verifier.ErrSandboxUnavailable)
	assert.Contains(t, err.Error(), "apt-get install bubblewrap")
	assert.Contains(t, err.Error(), "--no-sandbox")
	assert.NoDirExists(t, filepath.Join(repo, ".statgraph"), "nothing was written in the repository")
	plan, perr := dispatch.NewPlan(repo, filepath.Join(repo, "tasks.json"), "")
	require.NoError(t, perr)
	assert.NoDirExists(t, plan.Dir, "nothing was written in the plan's state directory")
	b, rerr := os.ReadFile(filepath.Join(repo, "tasks.json"))
	require.NoError(t, rerr)
	assert.Equal(t, fmt.Sprintf(plantingTasks, repo), string(b), "tasks.json is unchanged")

	_, log, err := runDispatcher(t, true)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(log, "warning: --no-sandbox"), "warned once: %s", log)
}

// TestDispatcherNetwork: through the dispatcher, a check cannot reach a
// service on the host's 127.0.0.1 by default; it can when the task lists
// it ("network": ["127.0.0.1:PORT"], served at the same address inside
// through statgraph's proxy) or opens the network ("network": true),
// which the run notes once.
func TestDispatcherNetwork(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "reached") }))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	dir := t.TempDir()
	gitRepo(t, dir, map[string]string{"tasks.json": fmt.Sprintf(`{"tasks": [
  {"id": 1, "title": "closed", "max_retries": 1, "executor": {"command": ["true"]}, "test_cmd": "curl -sSf http://%[1]s/"},
  {"id": 2, "title": "listed", "max_retries": 1, "executor": {"command": ["true"]}, "test_cmd": "curl -sSf http://%[1]s/",
   "sandbox": {"network": ["%[1]s"]}},
  {"id": 3, "title": "open", "max_retries": 1, "executor": {"command": ["true"]}, "test_cmd": "curl -sSf http://%[1]s/",
   "sandbox": {"network": true}}
]}`, addr)})
	f, err := tasks.Load(filepath.Join(dir, "tasks.json"), "")
	require.NoError(t, err)
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "runs.db"))
	require.NoError(t, err)
	defer st.Close()
	self, err := filepath.Abs(os.Args[0])
	require.NoError(t, err)
	var log bytes.Buffer
	d := &dispatch.Dispatcher{File: f, Checkpointer: st, Jobs: 3, Log: &log, SandboxHelper: []string{self, "sandbox-init"}}
	sum, err := d.Run(ctx)
	require.NoError(t, err)
	got := map[string]string{}
	for _, u := range sum.Units {
		got[u.ID] = u.Status
	}
	assert.Equal(t, map[string]string{"1": tasks.StatusFailed, "2": tasks.StatusDone, "3": tasks.StatusDone}, got, log.String())
	assert.Equal(t, 1, strings.Count(log.String(), `note: task 3: "sandbox": {"network": true}`), log.String())
}
