package tests

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlanCompilesRepositoryPackageOnce: a chain of two tasks on a Go
// repository, each checking with `go build -v` (which names every package
// it compiles). The second task's check fails when it compiles the
// repository's package that the first task's check compiled: each task's
// workspace appears at the repository's path in its sandbox and the first
// task's build cache is a layer under the second's. Before, every
// workspace had its own path, so the package had another build-cache key
// in each task and was compiled once per task. After the run no cache of
// the plan is left.
func TestPlanCompilesRepositoryPackageOnce(t *testing.T) {
	t.Parallel()
	const compiles = `go build -v -o /dev/null . > build.log 2>&1 || { cat build.log; exit 2; }; cat build.log; `
	repo := newRepo(t, map[string]string{
		"go.mod":     "module example.com/chain\n\ngo 1.22\n",
		"lib/lib.go": "package lib\n\n// Answer is the answer.\nfunc Answer() int { return 42 }\n",
		"main.go":    "package main\n\nimport \"example.com/chain/lib\"\n\nfunc main() { println(lib.Answer()) }\n",
		".gitignore": "build.log\n",
		"tasks.json": `{"tasks": [
  {"id": 1, "title": "first", "max_retries": 0, "executor": {"command": ["sh", "-c", "echo one > one.txt"]},
   "test_cmd": ["sh", "-c", "` + compiles + `grep -q example.com/chain/lib build.log"]},
  {"id": 2, "title": "second", "dependencies": [1], "max_retries": 0, "executor": {"command": ["sh", "-c", "echo two > two.txt"]},
   "test_cmd": ["sh", "-c", "` + compiles + `! grep example.com/chain/lib build.log"]}]}`,
	})
	r := statgraph(t, repo, "run", "--plain", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	for id, doc := range readTasks(t, filepath.Join(repo, "tasks.json")) {
		assert.Equal(t, "done", doc.Status, "task %s: %s %v", id, doc.StatusReason, doc.ErrorHistory)
		assert.Empty(t, doc.ErrorHistory, "task %s needed a retry: its first attempt compiled the package", id)
	}
	plan := planOf(t, repo, "tasks.json", "")
	left, _ := filepath.Glob(filepath.Join(plan.Dir, "cache", "*"))
	hidden, _ := filepath.Glob(filepath.Join(plan.Dir, "cache", ".*"))
	assert.Empty(t, append(left, hidden...), "caches left after the run")
}
