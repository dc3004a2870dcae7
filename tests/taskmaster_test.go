package tests

import (
	"encoding/json"
	"fmt"
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

// TestTaskMasterDuplicateSubtaskIDs takes the shape of task-master's own
// master tag (its repository's .taskmaster/tasks/tasks.json): a pending
// task 42 whose eight subtasks all carry id 42, which task-master itself
// lives with, among done and pending tasks, with metadata and fields
// statgraph does not know. Only task 42 is in doubt: validate exits 0
// with a warning at each duplicate's line:col, and run runs the runnable
// tasks, blocking 42 with the reason and the task that depends on it.
func TestTaskMasterDuplicateSubtaskIDs(t *testing.T) {
	t.Parallel()
	var subs []string
	for i := range 8 {
		subs = append(subs, fmt.Sprintf(`          {"id": 42, "title": "Protocol part %d", "description": "Part %d of the protocol.", "status": "pending", "dependencies": [], "details": "", "parentTaskId": 42}`, i+1, i+1))
	}
	file := `{
  "master": {
    "tasks": [
      {"id": 40, "title": "Done before", "description": "Finished.", "status": "done", "dependencies": [], "priority": "high", "details": "", "testStrategy": "", "previousStatus": "in-progress"},
      {"id": 41, "title": "Runnable", "description": "Pending, on a done task.", "status": "pending", "dependencies": [40], "priority": "medium", "details": "", "testStrategy": "", "subtasks": []},
      {
        "id": 42,
        "title": "Implement the protocol",
        "description": "Pending, with eight subtasks that all carry id 42.",
        "status": "pending",
        "dependencies": [],
        "priority": "medium",
        "subtasks": [
` + strings.Join(subs, ",\n") + `
        ]
      },
      {"id": 43, "title": "After the protocol", "description": "Waits for 42.", "status": "pending", "dependencies": [42], "priority": "low"},
      {"id": 44, "title": "Also runnable", "description": "No dependencies.", "status": "pending", "dependencies": [], "priority": "low"}
    ],
    "metadata": {"created": "2025-06-13T23:52:56.848Z", "updated": "2025-08-02T14:13:14.826Z", "description": "Main tag for the taskmaster project"}
  },
  "defaults": {"executor": {"command": ["true"]}, "test_cmd": "true"}
}
`
	repo := newRepo(t, map[string]string{"tasks.json": file})

	v := statgraph(t, repo, "validate", "--tag", "master", "tasks.json")
	require.Equal(t, 0, v.code, "stdout:\n%s\nstderr:\n%s", v.stdout, v.stderr)
	assert.Contains(t, v.stdout, "tasks.json is valid")
	assert.Contains(t, v.stdout, "7 warnings")
	for line := 15; line <= 21; line++ {
		assert.Contains(t, v.stdout, fmt.Sprintf("tasks.json:%d:11: task 42.42: duplicate id 42.42: the task at tasks.json:14:11 has it too", line))
	}
	assert.Contains(t, v.stdout, "task 42 is blocked until it is fixed, and so are the tasks that depend on it")

	r := statgraph(t, repo, "run", "--plain", "--tag", "master", "tasks.json")
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
	for id, st := range map[string]string{"40": "done", "41": "done", "42": "blocked", "43": "blocked", "44": "done"} {
		assert.Equal(t, st, got[id].Status, "task %s", id)
	}
	assert.Contains(t, got["42"].Subtasks[0].StatusReason, "duplicate id 42.42")
	assert.Contains(t, got["42"].Subtasks[0].StatusReason, "statgraph reset 42")
	assert.Contains(t, got["43"].StatusReason, "dependency 42.42 blocked")
	plan := planOf(t, repo, "tasks.json", "master")
	assert.Equal(t, []string{plan.Branch("41"), plan.Branch("44")}, branches(t, repo))
}
