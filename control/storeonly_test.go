package control_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
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
