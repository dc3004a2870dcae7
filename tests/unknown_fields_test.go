package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unknownFieldsTasks has fields statgraph does not know at the top level,
// in tasks, in subtasks and in nested objects, with number
// spellings and string escapes a re-encoder would change. (defaults is
// statgraph's own object: an unknown field there is reported as a likely
// typo, so it has none.)
const unknownFieldsTasks = `{
  "$schema": "https://example.invalid/tasks.schema.json",
  "meta": {"generated": "2025-01-02", "nested": {"deep": [1, {"x": null}, 2.50]}},
  "defaults": {
    "executor": {"command": ["true"]}
  },
  "x-owner": {"team": "core"},
  "tasks": [
    {
      "id": 1,
      "title": "Passes",
      "assignee": {"name": "Zo\u00eb", "teams": ["a", "b"]},
      "estimate": 1.50e3,
      "test_cmd": "true",
      "note": "tab\tand \"quotes\"",
      "labels": []
    },
    {
      "id": 2,
      "title": "Has subtasks",
      "x-flag": true,
      "subtasks": [
        {"id": 1, "title": "First part", "test_cmd": "true", "x-sub": {"k": [false, -0.0]}},
        {"id": 2, "title": "Second part", "dependencies": [1], "test_cmd": "true", "x-order": 3}
      ]
    },
    {
      "id": 3,
      "title": "Fails",
      "test_cmd": "false",
      "max_retries": 1,
      "x-ticket": {"tracker": "jira", "key": "ABC-1"}
    }
  ],
  "x-trailing": "last member"
}
`

// ownedFields are the members statgraph writes back.
var ownedFields = map[string]bool{
	"status": true, "status_reason": true, "retry_count": true, "error_history": true, "failed_at": true,
}

// TestUnknownFieldsSurvive runs a file full of fields statgraph does not
// know and checks that every one of them is still there afterwards, in its
// place and spelled as it was.
func TestUnknownFieldsSurvive(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"tasks.json": unknownFieldsTasks})
	file := filepath.Join(dir, "tasks.json")
	r := statgraph(t, dir, "run", "tasks.json")
	require.Equal(t, 1, r.code, "task 3 fails\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	got, err := os.ReadFile(file)
	require.NoError(t, err)

	tasks := readTasks(t, file)
	assert.Equal(t, "done", tasks["1"].Status, "the run wrote its results back")
	assert.Equal(t, "done", tasks["2"].Status, "the parent is done when its subtasks are")
	assert.Equal(t, "failed", tasks["3"].Status)
	if assert.Len(t, tasks["2"].Subtasks, 2) {
		assert.Equal(t, "done", tasks["2"].Subtasks[0].Status)
		assert.Equal(t, "done", tasks["2"].Subtasks[1].Status)
	}

	assert.Equal(t, tokensWithout(t, []byte(unknownFieldsTasks)), tokensWithout(t, got),
		"apart from the fields statgraph owns, the file has the same members in the same order:\n%s", got)
	for _, raw := range []string{
		`1.50e3`, `2.50`, `-0.0`, `"Zo\u00eb"`, `"tab\tand \"quotes\""`, `"labels": []`,
		`"$schema": "https://example.invalid/tasks.schema.json"`, `"x-trailing": "last member"`,
	} {
		assert.Contains(t, string(got), raw, "spelled as in the original")
	}
}

// tokensWithout returns the JSON tokens of data in order, numbers as
// written, without the members statgraph owns.
func tokensWithout(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct{ object, wantKey bool }
	var stack []frame
	var out []string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		if key, ok := tok.(string); ok && top != nil && top.object && top.wantKey {
			if !ownedFields[key] {
				out = append(out, "key:"+key)
				top.wantKey = false
			} else {
				skipValue(t, dec)
			}
			continue
		}
		out = append(out, fmt.Sprintf("%T:%v", tok, tok))
		switch tok {
		case json.Delim('{'), json.Delim('['):
			stack = append(stack, frame{object: tok == json.Delim('{'), wantKey: tok == json.Delim('{')})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				stack[len(stack)-1].wantKey = true
			}
		default:
			if top != nil {
				top.wantKey = true
			}
		}
	}
}

// skipValue reads one whole value from dec.
func skipValue(t *testing.T, dec *json.Decoder) {
	t.Helper()
	depth := 0
	for {
		tok, err := dec.Token()
		require.NoError(t, err)
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return
		}
	}
}
