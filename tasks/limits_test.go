package tasks

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseTimeoutsAndLimits(t *testing.T) {
	f, err := Parse("tasks.json", []byte(`{
  "defaults": {"timeout": "20m", "request_timeout": "30s", "limits": {"tool_calls_per_turn": 8, "write_files": 100, "file_bytes": 4096, "processes": 64, "memory_bytes": 1073741824}},
  "tasks": [
    {"id": 1, "title": "inherits"},
    {"id": 2, "title": "overrides", "timeout": "1h", "limits": {"write_files": 5, "response_bytes": 1024, "tmp_bytes": 1048576, "open_files": 256},
     "subtasks": [{"id": 1, "title": "sub"}]}
  ]
}`), "")
	require.NoError(t, err)
	one, two := f.Tasks[0], f.Tasks[1]
	assert.Equal(t, 20*time.Minute, one.Timeout)
	assert.Equal(t, 30*time.Second, one.RequestTimeout)
	assert.Equal(t, Limits{ToolCallsPerTurn: 8, WriteFiles: 100, FileBytes: 4096, Processes: 64, MemoryBytes: 1 << 30}, one.Limits)
	assert.Equal(t, time.Hour, two.Timeout)
	assert.Equal(t, 30*time.Second, two.RequestTimeout, "from defaults")
	assert.Equal(t, Limits{ResponseBytes: 1024, ToolCallsPerTurn: 8, WriteFiles: 5, FileBytes: 4096, Processes: 64, MemoryBytes: 1 << 30,
		TmpBytes: 1 << 20, OpenFiles: 256}, two.Limits, "merged field by field")
	assert.Equal(t, two.Limits, two.Subtasks[0].Limits, "a subtask inherits its parent's limits")
	assert.Equal(t, time.Hour, two.Subtasks[0].Timeout)
}

func TestParseBadTimeoutsAndLimits(t *testing.T) {
	_, err := Parse("tasks.json", []byte(`{"tasks": [
 {"id": 1, "title": "a", "timeout": "soon", "request_timeout": 5, "limits": {"write_files": -1, "turns": 3}},
 {"id": 2, "title": "b", "limits": [1]}
]}`), "")
	var verr *ValidationError
	require.True(t, errors.As(err, &verr), "got %v; want *ValidationError", err)
	var got []string
	for _, p := range verr.Problems {
		got = append(got, p.String())
	}
	assert.Equal(t, []string{
		`tasks.json:2:37: task 1: "timeout" is "soon"; want a positive duration such as "90s" or "10m"`,
		`tasks.json:2:64: task 1: "request_timeout" is a number (5); want a string`,
		`tasks.json:2:93: task 1: "write_files" is -1; want 0 or more`,
		`tasks.json:2:97: task 1: limits: unknown field "turns" (known: response_bytes, conversation_bytes, tool_calls_per_turn, write_bytes, write_files, file_bytes, processes, memory_bytes, tmp_bytes, open_files)`,
		`tasks.json:3:36: task 2: "limits" is an array; want an object with any of response_bytes, conversation_bytes, tool_calls_per_turn, write_bytes, write_files, file_bytes, processes, memory_bytes, tmp_bytes, open_files`,
	}, got)
}
