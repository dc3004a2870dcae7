package dispatch

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/proc"
	"github.com/statgraph/statgraph/tasks"
)

// TestSandboxLimits: a task's "limits" (here its own merged with the
// defaults') become the bounds of its sandbox.
func TestSandboxLimits(t *testing.T) {
	f, err := tasks.Parse("tasks.json", []byte(`{
  "defaults": {"timeout": "20m", "request_timeout": "30s", "limits": {"tool_calls_per_turn": 8, "write_files": 100, "file_bytes": 4096, "processes": 64, "memory_bytes": 1073741824}},
  "tasks": [
    {"id": 1, "title": "inherits"},
    {"id": 2, "title": "overrides", "timeout": "1h", "limits": {"write_files": 5, "response_bytes": 1024, "tmp_bytes": 1048576, "open_files": 256},
     "subtasks": [{"id": 1, "title": "sub"}]}
  ]
}`), "")
	require.NoError(t, err)
	sb := (&Dispatcher{}).sandbox(f.Tasks[1], t.TempDir(), Plan{Dir: t.TempDir()})
	assert.Equal(t, proc.Limits{Procs: 64, MemoryBytes: 1 << 30, TmpBytes: 1 << 20, OpenFiles: 256}, sb.Limits, "the sandbox's bounds")
}
