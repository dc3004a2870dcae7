package control_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
	"github.com/statgraph/statgraph/tasks"
)

// Prepare takes the plan's lock before it reads anything: while another
// run holds the lock, a tasks file that run is rewriting (here: not valid
// for the moment) is not read, and the answer is that a run is going on,
// from statgraph run and from Start alike. Both read the file first
// before: the answer was the file's problems.
func TestPrepareLocksBeforeReading(t *testing.T) {
	file := controltest.NewPlan(t, `{"tasks":[{"id":"1","title":"one","test_cmd":["true"]}]}`)
	plan, _, err := control.Paths(file, "", "", "")
	require.NoError(t, err)
	c, err := control.Open(control.Options{File: file, Run: control.RunOptions{NoSandbox: true}})
	require.NoError(t, err)
	defer c.Close()

	lock, err := tasks.Lock(file)
	require.NoError(t, err)
	defer lock.Unlock()
	require.NoError(t, os.WriteFile(file, []byte(`{"tasks":[{"id":"1"`), 0o644))

	_, err = control.Prepare(bg, control.PrepareOptions{File: file, Plan: plan, Run: control.RunOptions{NoSandbox: true}})
	require.ErrorIs(t, err, control.ErrRunning)
	require.ErrorIs(t, c.Start(bg, control.StartOptions{}), control.ErrRunning)
	_, err = c.Reset("1")
	require.ErrorIs(t, err, control.ErrRunning)
}

// Prepare leaves nothing behind when a check fails: the lock is released
// (the next Prepare takes it) and the tasks file is as it was.
func TestPrepareReleasesTheLockOnError(t *testing.T) {
	const plan1 = `{"tasks":[{"id":"1","title":"one","test_cmd":["true"],"dependencies":["9"]}]}`
	file := controltest.NewPlan(t, plan1)
	plan, _, err := control.Paths(file, "", "", "")
	require.NoError(t, err)
	for range 2 {
		_, err = control.Prepare(bg, control.PrepareOptions{File: file, Plan: plan, Run: control.RunOptions{NoSandbox: true}})
		require.Error(t, err)
		require.NotErrorIs(t, err, control.ErrRunning, "the lock was released by the first Prepare")
	}
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, plan1, string(data))
}
