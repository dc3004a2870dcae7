package queue

// This file is the cleaning of a plan's work-in-progress branches on the
// shared remote (statgraph clean).

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/tasks"
)

// WIPBranch is the branch a worker pushes a unit's workspace commit to
// after every step (so that a worker taking the unit over finds it), until
// the unit's branch is published.
func WIPBranch(key, unit string) string { return "statgraph-wip/" + key + "/" + unit }

// CleanWIP deletes from remote the work-in-progress branches of the plan
// key's units that no longer need one, in one push, and returns those
// units, sorted. status gives a unit's status in the tasks file ("" for a
// unit not in it). A done unit's branch is deleted only when its published
// branch (statgraph/<key>/<unit>) is on the remote, so its work is never
// lost; a failed, blocked or cancelled unit's (it runs again from the
// start, after a reset, once its checkpoints are deleted) and one of a
// unit no longer in the file are deleted; a unit pending, in progress or
// interrupted keeps its branch, which a worker continuing it needs. dir
// is a git repository to push from (any: the remote is named by URL). A
// branch that moved since it was listed is not deleted (the push fails). A
// deletion the remote refuses leaves the others undone too (the push is
// atomic) and is returned as an error naming the remote.
func CleanWIP(ctx context.Context, dir, remote, key string, status func(unit string) string) ([]string, error) {
	out, err := git(ctx, dir, "ls-remote", "--heads", remote)
	if err != nil {
		return nil, fmt.Errorf("list the branches of the remote %s: %w", remote, err)
	}
	wip, published := map[string]string{}, map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		if u, ok := strings.CutPrefix(f[1], "refs/heads/"+WIPBranch(key, "")); ok {
			wip[u] = f[0]
		} else if u, ok := strings.CutPrefix(f[1], "refs/heads/statgraph/"+key+"/"); ok {
			published[u] = true
		}
	}
	var units []string
	var dels []workspace.RefUpdate
	for u := range wip {
		switch st := status(u); {
		case tasks.IsDone(st) && published[u], st == tasks.StatusFailed, st == tasks.StatusBlocked, st == tasks.StatusCancelled, st == "":
			units = append(units, u)
		}
	}
	if len(units) == 0 {
		return nil, nil
	}
	slices.Sort(units)
	for _, u := range units {
		dels = append(dels, workspace.RefUpdate{Name: "refs/heads/" + WIPBranch(key, u), Old: wip[u], Lease: true})
	}
	if err := pushRemote(ctx, dir, remote, dels...); err != nil {
		return nil, fmt.Errorf("delete %d work-in-progress branch(es) on the remote %s: %w", len(units), remote, err)
	}
	return units, nil
}
