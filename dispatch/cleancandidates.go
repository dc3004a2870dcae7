package dispatch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/statgraph/statgraph/agents/workspace"
)

// removeCandidateWorkspaces removes the workspaces the candidates of
// best-of-N unit id left under Plan.CandidateRoot (a run with
// --keep-workspaces, or one stopped while they ran) and returns the bytes
// freed. The caller decides, as for the unit's own workspace, that the
// unit will not run again (Clean keeps a runnable unit's). Candidates'
// branches stay.
func removeCandidateWorkspaces(plan Plan, id string) (int64, error) {
	entries, err := os.ReadDir(filepath.Join(plan.Dir, "candidates"))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var freed int64
	for _, e := range entries {
		k, err := strconv.Atoi(e.Name())
		if err != nil || k < 1 || !e.IsDir() {
			continue
		}
		n, err := workspace.RemoveDir(plan.CandidateRoot(k), id)
		freed += n
		if err != nil {
			return freed, err
		}
	}
	return freed, nil
}
