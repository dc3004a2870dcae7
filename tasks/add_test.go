package tasks_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/tasks"
)

// AddTask appends a task the way Load would accept it, giving it the next
// id, and keeps the rest of the file as it was.
func TestAddTaskAppendsAndNumbers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.json")
	require.NoError(t, os.WriteFile(path, []byte(`{
  "tasks": [
    {"id": 1, "title": "one", "x-user": {"keep": true}},
    {"id": 7, "title": "seven", "dependencies": [1]}
  ]
}
`), 0o644))
	id, f, err := tasks.AddTask(path, "", []byte(`{"title": "new", "dependencies": [7], "test_cmd": "true"}`), nil)
	require.NoError(t, err)
	require.Equal(t, "8", id)
	require.Len(t, f.Tasks, 3)
	g, err := tasks.Load(path, "")
	require.NoError(t, err)
	nt, ok := g.Task("8")
	require.True(t, ok)
	require.Equal(t, "new", nt.Title)
	require.Equal(t, []string{"7"}, nt.Dependencies)
	b, _ := os.ReadFile(path)
	require.Contains(t, string(b), `"x-user"`)
}

// A task the validation refuses leaves the file byte for byte as it was.
func TestAddTaskRefusedWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.json")
	orig := []byte(`{"tasks": [{"id": 1, "title": "one"}]}`)
	require.NoError(t, os.WriteFile(path, orig, 0o644))
	for _, bad := range []string{
		`{"id": 1, "title": "duplicate"}`,
		`{"title": "dep", "dependencies": [42]}`,
		`{"title": "bad retries", "max_retries": "x"}`,
		`{"id": "../x", "title": "path"}`,
		`["not an object"]`,
		`{"title": `,
	} {
		_, _, err := tasks.AddTask(path, "", []byte(bad), nil)
		require.Error(t, err, bad)
		b, _ := os.ReadFile(path)
		require.Equal(t, orig, b, bad)
	}
	var ve *tasks.ValidationError
	_, _, err := tasks.AddTask(path, "", []byte(`{"id": 1, "title": "duplicate"}`), nil)
	require.ErrorAs(t, err, &ve)
}

// In a tagged file the task goes into the chosen tag's list.
func TestAddTaskTagged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"master": {"tasks": [{"id": 1, "title": "m"}]}, "feat": {"tasks": [{"id": 1, "title": "f"}]}}`), 0o644))
	id, _, err := tasks.AddTask(path, "feat", []byte(`{"title": "f2"}`), nil)
	require.NoError(t, err)
	require.Equal(t, "2", id)
	m, err := tasks.Load(path, "master")
	require.NoError(t, err)
	require.Len(t, m.Tasks, 1)
	f, err := tasks.Load(path, "feat")
	require.NoError(t, err)
	require.Len(t, f.Tasks, 2)
}

// TestAddTaskRefusesConfinedProblems: a file may hold a task that its own
// problems block (duplicate subtask ids, a task on itself), but a task
// added through a front door may not bring one.
func TestAddTaskRefusesConfinedProblems(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.json")
	const doc = `{"tasks": [{"id": 1, "title": "one"}]}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
	for name, obj := range map[string]string{
		"duplicate subtask ids": `{"title": "two", "subtasks": [{"id": 1, "title": "a"}, {"id": 1, "title": "b"}]}`,
		"depends on itself":     `{"id": 2, "title": "two", "dependencies": [2]}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := tasks.AddTask(path, "", []byte(obj), nil)
			var verr *tasks.ValidationError
			require.ErrorAs(t, err, &verr)
			require.NotEmpty(t, verr.Problems)
			require.Equal(t, "2", verr.Problems[0].TaskID[:1])
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, doc, string(data), "nothing written")
		})
	}
}
