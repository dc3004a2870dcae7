package control_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
	"github.com/statgraph/statgraph/tasks"
)

// With StoreOnly, a plan whose tasks file is gone still opens for History,
// which reads only the run store; without it Open refuses.
func TestStoreOnlyOpensWithoutTheTasksFile(t *testing.T) {
	file := controltest.NewPlan(t, controltest.AskPlan)
	require.NoError(t, os.Remove(file))
	_, err := control.Open(control.Options{File: file})
	require.Error(t, err)
	c, err := control.Open(control.Options{File: file, StoreOnly: true})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.History(bg, "1", false)
	require.ErrorIs(t, err, control.ErrNoRun)
	require.Contains(t, err.Error(), "no run store at "+filepath.Dir(c.Plan().Store()))
}

// TasksOf reads the tasks file it is given, not the one on disk, so that a
// caller that has just read the file does not read it twice; Tasks reads
// the file.
func TestTasksOfReadsNoFile(t *testing.T) {
	file := controltest.NewPlan(t, controltest.AskPlan)
	f, err := tasks.Load(file, "")
	require.NoError(t, err)
	c, err := control.Open(control.Options{File: file, StoreOnly: true})
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, os.Remove(file))
	_, err = c.Tasks(bg)
	require.Error(t, err, "Tasks reads the file")
	ts, err := c.TasksOf(bg, f)
	require.NoError(t, err)
	require.Len(t, ts, len(f.Units()))
	require.Equal(t, "1", ts[0].ID)
	require.Equal(t, tasks.StatusPending, ts[0].Status)
}
