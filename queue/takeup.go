package queue

// This file is the worker's take-up of a unit whose run an earlier attempt
// ended and published but did not record (killed in between).

import (
	"context"
	"fmt"

	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/tasks"
)

// takeUp takes up unit a before it runs, when an earlier attempt ended its
// run and published its branch into its own clone (dispatch.RunOne), then
// died before staging the result: running the unit again would redo its
// work. The decision is the local run's (dispatch.Dispatcher.TakeUp). The
// sign of that window is the work in progress wip on the remote holding
// the commit of the run's last attempt (pushed after every step, deleted
// with the publication); without it the ended run is an earlier
// generation's and the unit runs again. The branch the decision reads in
// this worker's clone m is brought from the remote first: the remote's
// branch when it has one (the attempt's own, or one the user moved
// there, which is then left alone and the unit ends interrupted), else
// wip. ok is false when nothing is taken up: the unit runs.
func (w *Worker) takeUp(ctx context.Context, m *mirror, d *dispatch.Dispatcher, a UnitArgs, wip string) (dispatch.UnitResult, tasks.Outcome, bool, error) {
	if w.LastAttempt == nil { // no work in progress is pushed to take up from
		return dispatch.UnitResult{}, tasks.Outcome{}, false, nil
	}
	ur, o, ok, err := d.TakeUp(ctx, a.Unit, func(branch, last string) (bool, error) {
		got, err := m.remoteCommit(ctx, wip)
		if err != nil || got == "" || got != last {
			return false, err
		}
		from := wip
		if pub, err := m.remoteCommit(ctx, branch); err != nil {
			return false, err
		} else if pub != "" {
			from = branch
		}
		return true, m.fetchAs(ctx, from, branch)
	})
	if ok {
		w.logf("unit %s (%s): an earlier attempt ended its run and published its branch but was stopped before recording it; taken up as %s without running it again", a.Unit, a.Key, o.Status)
	}
	return ur, o, ok, err
}

// fetchAs sets branch to in the mirror to the remote's branch from.
func (m *mirror) fetchAs(ctx context.Context, from, to string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := git(ctx, m.dir, "-c", "maintenance.auto=false", "fetch", "--quiet", "--no-tags", m.remote, "+refs/heads/"+from+":refs/heads/"+to); err != nil {
		return fmt.Errorf("fetch %s from the remote %s: %w", from, m.remote, err)
	}
	return nil
}
