package tasks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const mergeFile = `{
  "tasks": [
    {"id": 1, "title": "one", "description": "first"},
    {"id": 2, "title": "two"}
  ]
}
`

// loadTemp writes content to a temporary tasks.json and loads it.
func loadTemp(t *testing.T, content string) (*File, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tasks.json")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	f, err := Load(path, "")
	require.NoError(t, err)
	return f, path
}

func TestSaveKeepsUserEdits(t *testing.T) {
	f, path := loadTemp(t, mergeFile)
	require.NoError(t, f.SetStatus("1", StatusInProgress, ""))
	require.NoError(t, f.Save())

	// The user retitles 2, edits 1's description and adds 3 in their editor.
	edited := strings.NewReplacer(`"title": "two"`, `"title": "two, retitled"`, `"description": "first"`, `"description": "edited"`).Replace(readString(t, path))
	edited = strings.Replace(edited, `"tasks": [`, `"tasks": [{"id": 3, "title": "three", "dependencies": [1]},`, 1)
	require.NoError(t, os.WriteFile(path, []byte(edited), 0o644))

	gen := f.Generation()
	require.NoError(t, f.Apply("1", Outcome{Status: StatusDone, RetryCount: 2, ErrorHistory: []string{"Retry 1: x"}}))
	require.NoError(t, f.Save())
	assert.Equal(t, gen+1, f.Generation())
	out := readString(t, path)
	for _, want := range []string{`"two, retitled"`, `"edited"`, `"three"`, `"retry_count": 2`, `"Retry 1: x"`} {
		assert.Contains(t, out, want)
	}
	assert.Equal(t, []string{`task 1 was edited in ` + path + ` while statgraph worked on it; your version is kept, and this run goes on with the version it started with`}, f.TakeNotes())
	var ids []string
	for _, u := range f.Units() {
		ids = append(ids, u.ID)
	}
	assert.Equal(t, []string{"3", "1", "2"}, ids, "the added task is a unit")
	t1, _ := f.Task("1")
	assert.Equal(t, StatusDone, t1.Status)
}

func TestSaveLeavesHalfEditedFileAlone(t *testing.T) {
	f, path := loadTemp(t, mergeFile)
	half := mergeFile[:40]
	require.NoError(t, os.WriteFile(path, []byte(half), 0o644))
	require.NoError(t, f.SetStatus("2", StatusDone, ""))
	require.NoError(t, f.Save(), "a file being edited is not an error")
	assert.Equal(t, half, readString(t, path), "statgraph does not write over the user's bytes")
	notes := f.TakeNotes()
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "cannot be read")

	// The user finishes: their edit and statgraph's pending result both land.
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(mergeFile, `"one"`, `"one!"`, 1)), 0o644))
	require.NoError(t, f.Save())
	out := readString(t, path)
	assert.Contains(t, out, `"one!"`)
	assert.Contains(t, out, `"status": "done"`)
}

func TestSaveNotesRemovedRunningTask(t *testing.T) {
	f, path := loadTemp(t, mergeFile)
	require.NoError(t, f.SetStatus("2", StatusInProgress, ""))
	require.NoError(t, f.Save())
	require.NoError(t, os.WriteFile(path, []byte(`{"tasks": [{"id": 1, "title": "one"}]}`+"\n"), 0o644))
	require.NoError(t, f.Save())
	notes := f.TakeNotes()
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "task 2 was removed")
	assert.NotContains(t, readString(t, path), `"two"`, "the user's removal is kept")
	assert.ErrorIs(t, f.SetStatus("2", StatusDone, ""), ErrNoTask)
}

func readString(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}
