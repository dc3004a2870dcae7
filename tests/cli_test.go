package tests

import (
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
		{name: "graph unknown format", args: []string{"graph", "--format", "svg"}, code: 2, stderr: []string{`unknown format "svg"`, "mermaid or dot"}, noStdout: true},
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
// model configured: it fails with a message saying how to configure one.
func TestLLMTaskWithoutModel(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{
		"tasks.json": `{"tasks": [{"id": 1, "title": "Needs a model", "executor": "llm", "test_cmd": "true"}]}` + "\n",
	})
	r := statgraph(t, dir, "run", "tasks.json")
	require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	task := readTasks(t, filepath.Join(dir, "tasks.json"))["1"]
	assert.Equal(t, "failed", task.Status)
	for _, want := range []string{"needs a model", "--model", "STATGRAPH_MODEL", "OPENAI_BASE_URL"} {
		assert.Contains(t, task.StatusReason, want, "status_reason says how to configure a model")
	}
	assert.NotNil(t, task.FailedAt)
	assert.Contains(t, r.stdout, "task needs a model but none is configured", "the run's output says it too")
	if assert.NotEmpty(t, task.ErrorHistory) {
		assert.Contains(t, task.ErrorHistory[len(task.ErrorHistory)-1], "--model")
	}
}
