package dispatch

import (
	"context"
	"os"
	"path/filepath"

	"github.com/statgraph/statgraph/agents/workspace"
)

// continueFrom returns the branch a new workspace of unit id starts from
// when the unit continues a thread whose workspace is gone: a done unit
// sent back with review comments (control.Review) has an unfinished
// thread again, and its workspace was removed once its branch was
// published, so the next attempt starts from that branch, the work
// reviewed. It returns "" when the workspace is there (it is used as it
// is), the thread is finished or has none, or the branch is missing.
func (d *Dispatcher) continueFrom(ctx context.Context, plan Plan, id string) string {
	if _, err := os.Stat(filepath.Join(plan.WorkDir(), id, ".git")); err == nil {
		return ""
	}
	cp, err := d.Checkpointer.Get(ctx, plan.Thread(id), 0)
	if err != nil || len(cp.Next) == 0 {
		return ""
	}
	branch := plan.Branch(id)
	if got, err := workspace.PublishedBranches(plan.Repo, []string{branch}); err != nil || len(got) != 1 {
		return ""
	}
	return branch
}
