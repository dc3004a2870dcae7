package tasks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/statgraph/statgraph/agents/workspace"
)

// publish publishes the unit's branch into the user's repository and
// checks that the repository can read it, publishing once more if not
// (Finish checks what it published). It returns the branch name, or the
// error of the last try.
func publish(ctx context.Context, ws *workspace.Workspace) (string, error) {
	err := ws.Finish(ctx)
	if errors.Is(err, workspace.ErrNotPublished) {
		err = ws.Finish(ctx)
	}
	if err != nil {
		return "", err
	}
	return ws.Branch(), nil
}

// republish makes sure a unit that is already done has its branch in the
// user's repository, readable and at its workspace's last commit,
// publishing it again if not (a crash or the user may have left it
// missing or unreadable). It returns the branch name, or "" when the
// branch could not be published; a unit whose workspace is gone is left
// as it is. Problems are written to Log.
func (d *Dispatcher) republish(ctx context.Context, plan Plan, id string) string {
	if _, err := os.Stat(filepath.Join(plan.WorkDir(), id, ".git")); err != nil {
		return ""
	}
	ws, err := workspace.Prepare(ctx, workspace.Options{Source: plan.Repo, TaskID: id, Plan: plan.Key, Root: plan.WorkDir()})
	if err != nil {
		d.logf("task %s is done but its workspace cannot be opened to check its branch: %v\n", id, err)
		return ""
	}
	defer ws.Close()
	if err := ws.CheckPublished(ctx); err == nil || ctx.Err() != nil {
		return ws.Branch()
	}
	branch, err := publish(ctx, ws)
	if err != nil {
		d.logf("task %s is done but its branch %s could not be published again: %v\n", id, ws.Branch(), err)
		return ""
	}
	d.logf("task %s: its branch %s was missing or unreadable in %s; published it again\n", id, branch, plan.Repo)
	return branch
}

// logf writes one line to Log, if any.
func (d *Dispatcher) logf(format string, args ...any) {
	if d.Log != nil {
		fmt.Fprintf(d.Log, format, args...)
	}
}
