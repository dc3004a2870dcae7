package dispatch

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
// branch could not be published. A unit whose workspace is gone cannot be
// published again: see withoutWorkspace. Problems are written to Log.
func (d *Dispatcher) republish(ctx context.Context, plan Plan, id string) string {
	if _, err := os.Stat(filepath.Join(plan.WorkDir(), id, ".git")); err != nil {
		return d.withoutWorkspace(ctx, plan, id)
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

// withoutWorkspace handles a done unit that has no workspace: removed once
// its branch was published (unless --keep-workspaces), removed by
// statgraph clean, or never made (done before statgraph ran it). It returns
// the unit's branch when the repository has it. Otherwise nothing can
// publish it again; when statgraph ran the unit (its thread has
// checkpoints), Log says so and how to get the work back.
func (d *Dispatcher) withoutWorkspace(ctx context.Context, plan Plan, id string) string {
	branch := plan.Branch(id)
	if got, err := workspace.PublishedBranches(plan.Repo, []string{branch}); err == nil && len(got) == 1 {
		return branch
	}
	if _, err := d.Checkpointer.Get(ctx, plan.Thread(id), 0); err != nil {
		return "" // not run by statgraph (or its run was cleaned): it never had a branch to restore
	}
	d.logf("task %s is done but its branch %s is missing from %s and its workspace was removed once the branch was published, "+
		"so it cannot be published again; run statgraph reset %s to run the task again (--keep-workspaces keeps workspaces)\n",
		id, branch, plan.Repo, id)
	return ""
}

// logf writes one line to Log, if any.
func (d *Dispatcher) logf(format string, args ...any) {
	if d.Log != nil {
		fmt.Fprintf(d.Log, format, args...)
	}
}
