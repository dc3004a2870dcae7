package tasks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// approve_plan comes from defaults, a parent passes it to its subtasks,
// and a task's own value wins; a value that is not a boolean is refused at
// its line:col.
func TestApprovePlanField(t *testing.T) {
	f, err := Parse("tasks.json", []byte(`{"defaults": {"approve_plan": true}, "tasks": [
  {"id": 1, "title": "a"},
  {"id": 2, "title": "b", "approve_plan": false, "subtasks": [{"id": 1, "title": "b1"}]}
]}`), "")
	require.NoError(t, err)
	one, _ := f.Task("1")
	two, _ := f.Task("2")
	sub, _ := f.Task("2.1")
	require.NotNil(t, one.ApprovePlan)
	assert.True(t, *one.ApprovePlan, "from defaults")
	require.NotNil(t, two.ApprovePlan)
	assert.False(t, *two.ApprovePlan, "the task's own value wins")
	require.NotNil(t, sub.ApprovePlan)
	assert.False(t, *sub.ApprovePlan, "a subtask takes its parent's")

	_, err = Parse("tasks.json", []byte(`{"tasks": [{"id": 1, "title": "a", "approve_plan": "yes"}]}`), "")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `tasks.json:1:52: task 1: "approve_plan" is a string ("yes"); want true or false`)
}
