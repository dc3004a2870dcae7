package web_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
)

// newControl makes a repository holding tasksJSON in a fresh STATGRAPH_HOME
// and a Control on it.
func newControl(t testing.TB, tasksJSON string, mc llm.Config) *control.Control {
	t.Helper()
	file := controltest.NewPlan(t, tasksJSON)
	c, err := control.Open(control.Options{File: file, Run: control.RunOptions{Model: mc, Jobs: 1}, Poll: 50 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}
