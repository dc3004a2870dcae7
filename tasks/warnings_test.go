package tasks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// taskMasterFile is a tagged file as task-master leaves it: finished work
// with problems of its own, statuses statgraph does not write, a dependency
// on another tag.
const taskMasterFile = `{
  "master": {"tasks": [
    {"id": 1, "title": "Finished long ago", "status": "done", "subtasks": [
      {"id": 1, "title": "a", "status": "done", "dependencies": [2]},
      {"id": 2, "title": "b", "status": "done", "dependencies": [1]},
      {"id": 2, "title": "b again", "status": "done"}
    ]},
    {"id": 2, "title": "Under review", "status": "review"},
    {"id": 3, "title": "tm-core done", "status": "completed"},
    {"id": 4, "title": "Odd status", "status": "someday"},
    {"id": 5, "title": "Needs the other tag", "dependencies": [40]},
    {"id": 6, "title": "Runs", "dependencies": [3]},
    {"id": 7, "title": "After the blocked one", "dependencies": [5]},
    {"id": 8, "title": "Done, pointing nowhere", "status": "done", "dependencies": [99]}
  ]},
  "feature": {"tasks": [{"id": 40, "title": "Elsewhere"}]}
}
`

func TestTaskMasterFileLoadsWithWarnings(t *testing.T) {
	f, err := Parse("tasks.json", []byte(taskMasterFile), "")
	require.NoError(t, err)
	var got []string
	for _, w := range f.Warnings {
		got = append(got, w.String())
	}
	assert.Equal(t, []string{
		`tasks.json:4:65: task 1.1: dependency cycle: 1.1 -> 1.2 -> 1.1; remove one of these dependencies`,
		`tasks.json:6:7: task 1.2: duplicate id 1.2: the task at tasks.json:5:7 has it too; ids must be unique`,
		`tasks.json:10:48: task 4: unknown status "someday": the task will not run (known: pending, in-progress, done, completed, review, failed, blocked, cancelled, deferred, interrupted, parked)`,
		`tasks.json:11:64: task 5: dependency 40 is a task of tag "feature"; statgraph runs one tag at a time, so this task is blocked; finish it there or remove the dependency`,
		`tasks.json:14:85: task 8: dependency 99 does not exist (known ids: 1, 1.1, 1.2, 1.2, 2, 3, 4, 5, 6, 7, 8)`,
	}, got)

	step := Next(f.Units(), f.Statuses())
	assert.Equal(t, []string{"6"}, step.Ready, "a completed dependency counts as done; review and unknown statuses do not run")
	assert.Equal(t, []Blocked{
		{ID: "5", Reason: `dependency 40 is a task of tag "feature"; statgraph runs one tag at a time`},
		{ID: "7", Reason: "dependency 5 blocked"},
	}, step.Blocked)
}

func TestProblemsOfRunnableTasksStayErrors(t *testing.T) {
	for name, doc := range map[string]string{
		"cycle":       `{"tasks": [{"id": 1, "title": "a", "dependencies": [2]}, {"id": 2, "title": "b", "status": "done", "dependencies": [1]}]}`,
		"duplicate":   `{"tasks": [{"id": 1, "title": "a"}, {"id": 1, "title": "b", "status": "done"}]}`,
		"workdir up":  `{"tasks": [{"id": 1, "title": "a", "workdir": "../outside"}]}`,
		"workdir abs": `{"tasks": [{"id": 1, "title": "a", "workdir": "/etc"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("tasks.json", []byte(doc), "")
			require.Error(t, err)
		})
	}
}

// TestConfinedProblemsBlockTheirTask takes the shape of task-master's own
// master tag: one pending task whose subtasks all carry id 42. Only that
// task is in doubt, so the file loads with a warning at each duplicate,
// the task is blocked with the reason, a task depending on it is blocked
// in turn, and the rest is ready.
func TestConfinedProblemsBlockTheirTask(t *testing.T) {
	const doc = `{"master": {"tasks": [
  {"id": 41, "title": "Before", "status": "done"},
  {"id": 42, "title": "Eight subtasks, one id", "status": "pending", "subtasks": [
    {"id": 42, "title": "a", "status": "pending"},
    {"id": 42, "title": "b", "status": "pending"},
    {"id": 42, "title": "c", "status": "pending"}
  ]},
  {"id": 43, "title": "Runs", "dependencies": [41]},
  {"id": 44, "title": "After 42", "dependencies": [42]},
  {"id": 45, "title": "Self", "dependencies": [45]}
]}}`
	f, err := Parse("tasks.json", []byte(doc), "")
	require.NoError(t, err)
	var got []string
	for _, w := range f.Warnings {
		got = append(got, w.String())
	}
	const blocked = "; task 42 is blocked until it is fixed, and so are the tasks that depend on it"
	assert.Equal(t, []string{
		`tasks.json:5:5: task 42.42: duplicate id 42.42: the task at tasks.json:4:5 has it too; ids must be unique` + blocked,
		`tasks.json:6:5: task 42.42: duplicate id 42.42: the task at tasks.json:4:5 has it too; ids must be unique` + blocked,
		`tasks.json:10:48: task 45: task 45 depends on itself; remove 45 from its dependencies; task 45 is blocked until it is fixed, and so are the tasks that depend on it`,
	}, got)

	step := Next(f.Units(), f.Statuses())
	assert.Equal(t, []string{"43"}, step.Ready)
	assert.Equal(t, []Blocked{
		{ID: "42.42", Reason: "duplicate id 42.42: the task at tasks.json:4:5 has it too; ids must be unique (tasks.json:5:5); fix the file, then statgraph reset 42"},
		{ID: "44", Reason: "dependency 42.42 blocked"},
		{ID: "45", Reason: "task 45 depends on itself; remove 45 from its dependencies (tasks.json:10:48); fix the file, then statgraph reset 45"},
	}, step.Blocked)
}
