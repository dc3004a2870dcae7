package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCommands checks the commands that need no run: graph, version, usage
// errors and validate on a good file.
func TestCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   []string // substrings of stdout
		stderr   []string // substrings of stderr
		noStdout bool
	}{
		{name: "graph dot", args: []string{"graph", "--format", "dot"}, stdout: []string{"digraph", "planner", "executor", "verifier", "failed", "retry", "style=dashed"}},
		{name: "graph mermaid", args: []string{"graph"}, stdout: []string{"planner", "executor", "verifier"}},
		{name: "graph svg", args: []string{"graph", "--format", "svg"}, stdout: []string{"<svg", `data-node="planner"`, `data-node="executor"`, `data-node="verifier"`}},
		{name: "graph unknown format", args: []string{"graph", "--format", "png"}, code: 2, stderr: []string{`unknown format "png"`, "mermaid, dot or svg"}, noStdout: true},
		{name: "version", args: []string{"version"}, stdout: []string{"statgraph "}},
		{name: "unknown command", args: []string{"frobnicate"}, code: 2, stderr: []string{`unknown command "frobnicate"`, "Usage:"}, noStdout: true},
		{name: "no command", args: nil, code: 2, stderr: []string{"Usage:"}, noStdout: true},
		{name: "unknown flag", args: []string{"run", "--no-such-flag"}, code: 2, stderr: []string{"no-such-flag"}, noStdout: true},
		{name: "missing tasks file", args: []string{"validate", "nope.json"}, code: 2, stderr: []string{"nope.json", "no such file"}, noStdout: true},
		{name: "history without a run", args: []string{"history", "1"}, code: 2, stderr: []string{"no run store", "nothing has run yet"}, noStdout: true},
		{name: "validate the quickstart", args: []string{"validate", filepath.Join(root, "examples", "quickstart", "tasks.json")}, stdout: []string{"is valid: 3 tasks"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := statgraph(t, dir, tt.args...)
			assert.Equal(t, tt.code, r.code, "exit code\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			for _, s := range tt.stdout {
				assert.Contains(t, r.stdout, s)
			}
			for _, s := range tt.stderr {
				assert.Contains(t, r.stderr, s)
			}
			if tt.noStdout {
				assert.Empty(t, r.stdout)
			}
		})
	}
}

// TestGraphDotIsWellFormed checks the DOT drawing's shape: one digraph,
// balanced braces, and the orchestrator's edges.
func TestGraphDotIsWellFormed(t *testing.T) {
	t.Parallel()
	r := statgraph(t, t.TempDir(), "graph", "--format", "dot")
	require.Equal(t, 0, r.code, r.stderr)
	out := strings.TrimSpace(r.stdout)
	assert.True(t, strings.HasPrefix(out, "digraph"), "starts with digraph:\n%s", out)
	assert.True(t, strings.HasSuffix(out, "}"), "ends with a closing brace:\n%s", out)
	assert.Equal(t, strings.Count(out, "{"), strings.Count(out, "}"), "balanced braces")
	for _, edge := range [][2]string{{"planner", "executor"}, {"executor", "verifier"}, {"verifier", "executor"}, {"verifier", "failed"}} {
		found := false
		for _, line := range strings.Split(out, "\n") {
			if i := strings.Index(line, "->"); i > 0 && strings.Contains(line[:i], edge[0]) && strings.Contains(line[i:], edge[1]) {
				found = true
			}
		}
		assert.True(t, found, "edge %s -> %s in:\n%s", edge[0], edge[1], out)
	}
}

// TestLLMTaskWithoutModel runs a task whose executor is the LLM with no
// model configured: the preflight refuses the run with exit 2, says how to
// configure a model, and changes nothing (tasks.json byte for byte, no
// state directory, no lock file).
func TestLLMTaskWithoutModel(t *testing.T) {
	t.Parallel()
	tasksJSON := `{"tasks": [{"id": 1, "title": "Needs a model", "executor": "llm", "test_cmd": "true"}]}` + "\n"
	dir := newRepo(t, map[string]string{"tasks.json": tasksJSON})
	r := statgraph(t, dir, "run", "tasks.json")
	require.Equal(t, 2, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	for _, want := range []string{"task 1 needs a model", "--model", "STATGRAPH_MODEL", "OPENAI_BASE_URL", "nothing was changed"} {
		assert.Contains(t, r.stderr, want, "the error says how to configure a model")
	}
	got, err := os.ReadFile(filepath.Join(dir, "tasks.json"))
	require.NoError(t, err)
	assert.Equal(t, tasksJSON, string(got), "tasks.json is unchanged")
	assert.NoDirExists(t, planOf(t, dir, "tasks.json", "").Dir, "no state directory is created")
	assert.NoDirExists(t, filepath.Join(dir, ".statgraph"), "nor the old one in the repository")
	assert.NoFileExists(t, filepath.Join(dir, "tasks.json.lock"))
}
