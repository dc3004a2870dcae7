package tasks

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// largeFile generates a valid tasks file of at least size bytes: tasks with
// long details, unknown fields, dependencies on earlier tasks and a few
// subtasks each. It returns the data and the number of top-level tasks.
func largeFile(size int) ([]byte, int) {
	var b bytes.Buffer
	b.Grow(size + 4096)
	b.WriteString("{\n  \"meta\": {\"generated\": true},\n  \"tasks\": [\n")
	n := 0
	for b.Len() < size {
		if n > 0 {
			b.WriteString(",\n")
		}
		n++
		deps := "[]"
		if n > 1 {
			deps = fmt.Sprintf("[%d, \"%d\"]", n-1, max(1, n-7))
		}
		fmt.Fprintf(&b, `    {
      "id": %d,
      "title": "Task number %d",
      "description": "Generated task \u00e9 with an escaped \"quote\"",
      "status": "pending",
      "dependencies": %s,
      "priority": "medium",
      "details": "%s",
      "x_extra": {"labels": ["gen", "load"], "score": %d.5, "nested": {"deep": [1, 2, {"k": null}]}},
      "subtasks": [
        {"id": 1, "title": "first part", "dependencies": []},
        {"id": 2, "title": "second part", "dependencies": [1], "note": "kept"}
      ]
    }`, n, n, deps, bytes.Repeat([]byte("lorem ipsum "), 20), n)
	}
	b.WriteString("\n  ]\n}\n")
	return b.Bytes(), n
}

func TestParseLargeFile(t *testing.T) {
	data, n := largeFile(10 << 20)
	f, err := Parse("tasks.json", data, "")
	require.NoError(t, err)
	require.Len(t, f.Tasks, n)
	last := f.Tasks[n-1]
	assert.Equal(t, fmt.Sprint(n), last.ID)
	assert.Equal(t, []string{fmt.Sprint(n - 1), fmt.Sprint(max(1, n-7))}, last.Dependencies)
	units := f.Units()
	assert.Len(t, units, 2*n)
	assert.Equal(t, "1.1", Next(units, nil).Ready[0], "task 1 has subtasks, so its first subtask is ready")
}

func BenchmarkParse10MB(b *testing.B) {
	data, _ := largeFile(10 << 20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("tasks.json", data, ""); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSave(b *testing.B) {
	data, _ := largeFile(1 << 20)
	path := b.TempDir() + "/tasks.json"
	f, err := Parse(path, data, "")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for i := 0; b.Loop(); i++ {
		if err := f.Apply("1.1", Outcome{Status: StatusInProgress, RetryCount: i}); err != nil {
			b.Fatal(err)
		}
		if err := f.Save(); err != nil {
			b.Fatal(err)
		}
	}
}
