package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

// TestTaskMasterFileAsItIs takes a tagged file as claude-task-master and
// tm-core leave it: every status they use, an unknown one, a dependency
// cycle and duplicate ids among the subtasks of a done task, and a
// dependency on a task of another tag. validate accepts it with warnings
// (exit 0), status shows it, and run runs exactly the runnable tasks: the
// one on a completed dependency and the in-progress one; the cross-tag one
// ends blocked saying why; the others keep their status.
func TestTaskMasterFileAsItIs(t *testing.T) {
	t.Parallel()
	const file = `{
  "master": {
    "tasks": [
      {"id": 1, "title": "Finished", "status": "done", "subtasks": [
        {"id": 1, "title": "a", "status": "done", "dependencies": [2]},
        {"id": 2, "title": "b", "status": "done", "dependencies": [1]},
        {"id": 2, "title": "b, twice", "status": "done"}
      ]},
      {"id": 2, "title": "In review", "status": "review"},
      {"id": 3, "title": "tm-core completed", "status": "completed"},
      {"id": 4, "title": "Later", "status": "deferred"},
      {"id": 5, "title": "Dropped", "status": "cancelled"},
      {"id": 6, "title": "Stuck", "status": "blocked"},
      {"id": 7, "title": "Someday", "status": "someday"},
      {"id": 10, "title": "After completed", "status": "pending", "dependencies": [3]},
      {"id": 11, "title": "Half done", "status": "in-progress"},
      {"id": 12, "title": "Needs the other tag", "dependencies": [40]}
    ],
    "defaults": {"executor": {"command": ["true"]}, "test_cmd": "true"}
  },
  "feature": {"tasks": [{"id": 40, "title": "Elsewhere", "status": "pending"}]}
}
`
	repo := newRepo(t, map[string]string{"tasks.json": file})

	v := statgraph(t, repo, "validate", "tasks.json")
	require.Equal(t, 0, v.code, "stdout:\n%s\nstderr:\n%s", v.stdout, v.stderr)
	assert.Contains(t, v.stdout, "tasks.json is valid")
	assert.Contains(t, v.stdout, "4 warnings")
	for _, w := range []string{"dependency cycle: 1.1 -> 1.2 -> 1.1", "duplicate id 1.2", `unknown status "someday"`, `dependency 40 is a task of tag "feature"`} {
		assert.Contains(t, v.stdout, w)
	}

	s := statgraph(t, repo, "status", "tasks.json")
	require.Equal(t, 0, s.code, "stdout:\n%s\nstderr:\n%s", s.stdout, s.stderr)
	assert.Contains(t, s.stdout, "review")
	assert.Contains(t, s.stdout, "completed")

	r := statgraph(t, repo, "run", "--plain", "tasks.json")
	assert.Equal(t, 1, r.code, "a blocked task makes the exit code 1\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	data, err := os.ReadFile(filepath.Join(repo, "tasks.json"))
	require.NoError(t, err)
	var doc map[string]struct {
		Tasks []taskDoc `json:"tasks"`
	}
	require.NoError(t, json.Unmarshal(data, &doc), "%s", data)
	got := map[string]taskDoc{}
	for _, task := range doc["master"].Tasks {
		got[task.ID.String()] = task
	}
	want := map[string]string{"1": "done", "2": "review", "3": "completed", "4": "deferred", "5": "cancelled", "6": "blocked",
		"7": "someday", "10": "done", "11": "done", "12": "blocked"}
	for id, st := range want {
		assert.Equal(t, st, got[id].Status, "task %s", id)
	}
	assert.Contains(t, got["12"].StatusReason, `tag "feature"`)
	assert.Equal(t, "pending", doc["feature"].Tasks[0].Status, "another tag is not touched")
	plan := planOf(t, repo, "tasks.json", "")
	assert.Equal(t, []string{plan.Branch("10"), plan.Branch("11")}, branches(t, repo))
}

// branches lists the statgraph branches of repo.
func branches(t *testing.T, repo string) []string {
	t.Helper()
	return strings.Fields(gittest.Git(t, repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/statgraph/"))
}
