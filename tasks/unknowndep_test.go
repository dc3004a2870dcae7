package tasks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An unknown dependency is confined to the task naming it: the file loads
// with a warning at the dependency saying which task and which id; that
// task is blocked with the reason (a subtask's blocks its parent task),
// the tasks depending on it are blocked in turn, and the rest is ready.
func TestUnknownDependencyBlocksItsTask(t *testing.T) {
	f, err := Parse("tasks.json", []byte(`{"tasks": [
  {"id": 1, "title": "one"},
  {"id": 2, "title": "two", "dependencies": [1, 9]},
  {"id": 3, "title": "three", "dependencies": [2]},
  {"id": 4, "title": "four", "subtasks": [{"id": 1, "title": "a", "dependencies": ["4.9"]}, {"id": 2, "title": "b"}]},
  {"id": 5, "title": "five", "dependencies": [40]}
], "feature": {"tasks": [{"id": 40, "title": "x"}]}}`), "")
	require.NoError(t, err)
	var got []string
	for _, w := range f.Warnings {
		got = append(got, w.String())
	}
	assert.Equal(t, []string{
		`tasks.json:3:49: task 2: dependency 9 does not exist (known ids: 1, 2, 3, 4, 4.1, 4.2, 5); task 2 is blocked until it is fixed, and so are the tasks that depend on it`,
		`tasks.json:5:84: task 4.1: dependency 4.9 does not exist (known ids: 1, 2, 3, 4, 4.1, 4.2, 5); task 4 is blocked until it is fixed, and so are the tasks that depend on it`,
		`tasks.json:6:47: task 5: dependency 40 does not exist (known ids: 1, 2, 3, 4, 4.1, 4.2, 5); task 5 is blocked until it is fixed, and so are the tasks that depend on it`,
	}, got)

	step := Next(f.Units(), f.Statuses())
	assert.Equal(t, []string{"1"}, step.Ready)
	reasons := map[string]string{}
	for _, b := range step.Blocked {
		reasons[b.ID] = b.Reason
	}
	assert.Equal(t, "dependency 9 does not exist (known ids: 1, 2, 3, 4, 4.1, 4.2, 5) (tasks.json:3:49); fix the file, then statgraph reset 2", reasons["2"])
	assert.Equal(t, "dependency 2 blocked", reasons["3"])
	assert.Contains(t, reasons["4.1"], "dependency 4.9 does not exist")
	assert.Contains(t, reasons["4.2"], "dependency 4.9 does not exist", "the parent task is blocked: all of its subtasks")
	assert.Contains(t, reasons["5"], "dependency 40 does not exist", "a plain file's other keys are no tags")
	assert.Len(t, step.Blocked, 5)
}
