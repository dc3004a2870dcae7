package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/internal/gittest"
	"github.com/stretchr/testify/require"
)

// result is how a statgraph process ended.
type result struct {
	code           int
	stdout, stderr string
}

// quickstart copies examples/quickstart into a new temporary git
// repository and returns its path.
func quickstart(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join(root, "examples", "quickstart"))))
	gittest.Init(t, dir, nil)
	return dir
}

// newRepo writes files (path -> content) into a new temporary git
// repository and returns its path. Files ending in .sh are executable.
func newRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		mode := os.FileMode(0o644)
		if filepath.Ext(name) == ".sh" {
			mode = 0o755
		}
		require.NoError(t, os.WriteFile(p, []byte(content), mode))
	}
	gittest.Init(t, dir, nil)
	return dir
}

// command returns an unstarted statgraph process in dir.
func command(ctx context.Context, dir string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = childEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	return cmd, &stdout, &stderr
}

// statgraph runs the binary in dir to its end (at most two minutes).
func statgraph(t testing.TB, dir string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, stdout, stderr := command(ctx, dir, args...)
	return wait(t, cmd.Run(), stdout, stderr)
}

// wait turns the error of a finished process into a result.
func wait(t testing.TB, err error, stdout, stderr *bytes.Buffer) result {
	t.Helper()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.Exited():
		r.code = ee.ExitCode()
	default:
		require.NoError(t, err, "statgraph did not exit normally\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	return r
}

// taskDoc is the part of tasks.json the tests check.
type taskDoc struct {
	ID           json.Number `json:"id"`
	Status       string      `json:"status"`
	StatusReason string      `json:"status_reason"`
	RetryCount   int         `json:"retry_count"`
	ErrorHistory []string    `json:"error_history"`
	FailedAt     *string     `json:"failed_at"`
	Subtasks     []taskDoc   `json:"subtasks"`
}

// readTasks reads the untagged tasks file at path, keyed by task id.
func readTasks(t testing.TB, path string) map[string]taskDoc {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc struct {
		Tasks []taskDoc `json:"tasks"`
	}
	require.NoError(t, json.Unmarshal(data, &doc), "%s is not valid JSON:\n%s", path, data)
	out := make(map[string]taskDoc, len(doc.Tasks))
	for _, task := range doc.Tasks {
		out[task.ID.String()] = task
	}
	return out
}

// leftovers lists the files in dir whose names start with a dot and
// contain base: lock and temporary files of the tasks file base.
func leftovers(t testing.TB, dir, base string) []string {
	t.Helper()
	var out []string
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		n := e.Name()
		if n != base && len(n) > len(base) && (n[0] == '.' || filepath.Ext(n) == ".lock") && bytes.Contains([]byte(n), []byte(base)) {
			out = append(out, n)
		}
	}
	return out
}

// fileExists reports whether path exists.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// planOf returns the plan of the tasks file file (relative to dir) in the
// repository dir: where the binary keeps its state and names its branches.
func planOf(t testing.TB, dir, file, tag string) dispatch.Plan {
	t.Helper()
	p, err := dispatch.NewPlan(dir, filepath.Join(dir, file), tag)
	require.NoError(t, err)
	return p
}
