package dispatch

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/tasks"
	"github.com/statgraph/statgraph/verifier"
)

// TestFileDataAgreesWithAgents: the names and defaults the file format
// keeps as plain data (tasks is a leaf) are the ones the agents and the
// verifier act on, so a file Load accepts is one the dispatcher can run.
func TestFileDataAgreesWithAgents(t *testing.T) {
	assert.Equal(t, agents.PresetNames(), tasks.ExecutorPresets, "tasks.ExecutorPresets must list agents.PresetNames()")
	assert.Equal(t, agents.DefaultMaxRetries, tasks.DefaultMaxRetries)
	assert.Equal(t, []string{string(verifier.KindTest), string(verifier.KindLint), string(verifier.KindOther)}, tasks.CheckKinds)
	assert.Equal(t, []string{string(verifier.Blocking), string(verifier.Advisory), string(verifier.Informational)}, tasks.CheckModes)
}

// TestCheckConversion: a check of the file reaches the verifier with its
// name, command, timeout, kind and mode.
func TestCheckConversion(t *testing.T) {
	f, err := tasks.Parse("tasks.json", []byte(`{"tasks": [{"id": 1, "title": "t",
  "checks": [{"name": "race", "cmd": ["go", "test", "-race", "./..."], "kind": "test", "mode": "advisory", "timeout": "5m"},
             {"name": "sh", "cmd": "make lint"}]}]}`), "")
	if err != nil {
		t.Fatal(err)
	}
	got := []verifier.Check{check(f.Tasks[0].Checks[0]), check(f.Tasks[0].Checks[1])}
	want := []verifier.Check{
		{Name: "race", Command: verifier.Command{Argv: []string{"go", "test", "-race", "./..."}, Timeout: 5 * time.Minute}, Kind: verifier.KindTest, Mode: verifier.Advisory},
		{Name: "sh", Command: verifier.Command{Shell: "make lint", Timeout: 10 * time.Minute}},
	}
	assert.Equal(t, want, got)
}
