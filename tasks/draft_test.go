package tasks

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var draftTime = time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)

// TestAddTagKeepsEveryOtherByte: the new tag goes at the end of the
// top-level object, in the file's indentation, and every byte before and
// after it is the file's own, whatever its layout (a BOM, tabs, an empty
// object, no final newline).
func TestAddTagKeepsEveryOtherByte(t *testing.T) {
	for name, doc := range map[string]string{
		"tabs":       "{\n\t\"master\": {\"tasks\": [{\"id\": 1, \"title\": \"a\"}]}\n}\n",
		"bom":        "\xEF\xBB\xBF{\"master\":{\"tasks\":[]} ,  \"x\": 1}",
		"empty":      "{}\n",
		"four space": "{\n    \"master\": {\n        \"tasks\": []\n    }\n}",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tasks.json")
			require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
			f, err := AddTag(path, "new", "from a spec", []Draft{
				{ID: 1, Title: "One", Description: "d", Priority: "high"},
				{ID: 2, Title: "Two", Description: "d", Priority: "low", Dependencies: []int{1}},
			}, draftTime)
			require.NoError(t, err)
			assert.Equal(t, []string{"1", "2"}, []string{f.Tasks[0].ID, f.Tasks[1].ID})
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			end := strings.LastIndexByte(doc, '}')
			last := len(strings.TrimRight(doc[:end], " \t\r\n"))
			assert.True(t, strings.HasPrefix(string(data), doc[:last]), "prefix kept:\n%s", data)
			assert.True(t, strings.HasSuffix(string(data), doc[last:]), "suffix kept:\n%s", data)
			assert.Contains(t, string(data), `"created": "2026-11-28T09:00:00.000Z"`)
			g, err := Load(path, "new")
			require.NoError(t, err)
			assert.Empty(t, g.Warnings)
		})
	}
}

func TestAddTagRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		doc    string
		drafts []Draft
		want   string
	}{
		"existing tag": {`{"new": {"tasks": []}}`, []Draft{{ID: 1, Title: "a", Description: "d"}}, `has a tag "new"`},
		"plain form":   {`{"tasks": []}`, []Draft{{ID: 1, Title: "a", Description: "d"}}, `has the plain form`},
		"cycle": {`{"master": {"tasks": []}}`, []Draft{{ID: 1, Title: "a", Description: "d", Dependencies: []int{2}},
			{ID: 2, Title: "b", Description: "d", Dependencies: []int{1}}}, "dependency cycle: 1 -> 2 -> 1"},
		"unknown dependency": {`{"master": {"tasks": []}}`, []Draft{{ID: 1, Title: "a", Description: "d", Dependencies: []int{3}}}, "dependency 3 does not exist"},
		"on itself":          {`{"master": {"tasks": []}}`, []Draft{{ID: 1, Title: "a", Description: "d", Dependencies: []int{1}}}, "task 1 depends on itself"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tasks.json")
			require.NoError(t, os.WriteFile(path, []byte(tc.doc), 0o644))
			_, err := AddTag(path, "new", "", tc.drafts, draftTime)
			require.ErrorContains(t, err, tc.want)
			data, rerr := os.ReadFile(path)
			require.NoError(t, rerr)
			assert.Equal(t, tc.doc, string(data), "nothing written")
			if name == "existing tag" {
				assert.True(t, errors.Is(err, ErrTagExists))
				assert.ErrorIs(t, CanAddTag(path, "new"), ErrTagExists)
			}
		})
	}
	_, err := AddTag(filepath.Join(t.TempDir(), "tasks.json"), "", "", []Draft{{ID: 1, Title: "a", Description: "d", Dependencies: []int{9}}}, draftTime)
	require.ErrorContains(t, err, "dependency 9 does not exist")
}

// TestAddSubtasks appends subtasks after the task's own, numbered on, and
// refuses a task that is not pending or a list that does not validate.
func TestAddSubtasks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.json")
	const doc = `{"master": {"tasks": [
  {"id": 1, "title": "a", "subtasks": [{"id": 1, "title": "first"}]},
  {"id": 2, "title": "b", "status": "done"}
]}}
`
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o644))
	f, err := Load(path, "")
	require.NoError(t, err)
	task, _ := f.Task("1")
	assert.Equal(t, 2, NextSubtaskID(task))
	nf, err := AddSubtasks(path, "", "1", []Draft{{ID: 2, Title: "second", Description: "d", Dependencies: []int{1}}})
	require.NoError(t, err)
	task, _ = nf.Task("1")
	require.Len(t, task.Subtasks, 2)
	assert.Equal(t, []string{"1"}, task.Subtasks[1].Dependencies)
	assert.Equal(t, []string{"1.1"}, nf.Units()[1].Deps)

	before, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, tc := range []struct {
		id     string
		drafts []Draft
		want   string
	}{
		{"2", []Draft{{ID: 1, Title: "x", Description: "d"}}, "task 2 is done; only a pending task can be expanded"},
		{"1.1", []Draft{{ID: 1, Title: "x", Description: "d"}}, "task 1.1 is a subtask"},
		{"9", []Draft{{ID: 1, Title: "x", Description: "d"}}, "no such task: 9 (known: 1, 1.1, 1.2, 2)"},
		{"1", []Draft{{ID: 3, Title: "x", Description: "d", Dependencies: []int{3}}}, "1.3 depends on itself"},
		{"1", []Draft{{ID: 1, Title: "x", Description: "d"}}, "duplicate id 1.1"},
	} {
		_, err := AddSubtasks(path, "", tc.id, tc.drafts)
		require.ErrorContains(t, err, tc.want)
		after, rerr := os.ReadFile(path)
		require.NoError(t, rerr)
		assert.Equal(t, string(before), string(after), "nothing written for %s", tc.want)
	}
}
