package control

import (
	"context"
	"errors"
	"slices"

	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/tasks"
)

// land.go holds the merge queue's operations (statgraph land): reading
// where each done task stands in the queue of each branch land ran onto
// (LandQueues), and landing from a front end (StartLand). The landing
// itself is dispatch.Dispatcher.Land; statgraph land sets it up with
// PrepareLand, StartLand the same way in the Control's run slot.

// LandQueue is the merge queue of one target branch: where each done task
// stands in it, in the plan's order.
type LandQueue struct {
	Onto  string      `json:"onto"`
	Tasks []LandEntry `json:"tasks"`
}

// LandEntry is one done task in a merge queue: its state
// (dispatch.LandLanded, LandWaiting, LandConflict, LandChecks,
// LandBlocked), why it is not landed, and the target's tip once it
// landed. A done task land has not reached yet is waiting.
type LandEntry struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	Commit string `json:"commit,omitempty"`
}

// LandQueues returns the merge queue of every branch land ran onto, the
// targets sorted by name; none when land never ran. It reads the plan's
// land record (dispatch.ReadLanding) and the tasks (Tasks) only.
func (c *Control) LandQueues(ctx context.Context) ([]LandQueue, error) {
	units, err := c.Tasks(ctx)
	if err != nil {
		return nil, err
	}
	return LandQueuesOf(c.plan, units)
}

// LandQueuesOf returns LandQueues for the units given (as Tasks or TasksOf
// return them).
func LandQueuesOf(plan dispatch.Plan, units []TaskInfo) ([]LandQueue, error) {
	targets, err := dispatch.LandTargets(plan)
	if err != nil {
		return nil, err
	}
	slices.Sort(targets)
	out := []LandQueue{}
	for _, t := range targets {
		recs, err := dispatch.ReadLanding(plan, t)
		if err != nil {
			return nil, err
		}
		q := LandQueue{Onto: t, Tasks: []LandEntry{}}
		for _, u := range units {
			if u.Status != tasks.StatusDone {
				continue
			}
			r, ok := recs[u.ID]
			if !ok {
				r.State = dispatch.LandWaiting
			}
			q.Tasks = append(q.Tasks, LandEntry{ID: u.ID, Title: u.Title, State: r.State, Reason: r.Reason, Commit: r.Commit})
		}
		out = append(out, q)
	}
	return out, nil
}

// checkLandTarget checks onto as land's target (dispatch.CheckLandTarget)
// and gives its error a Kind: a branch checked out is a conflict (it can
// be switched away), a name that is no branch is refused.
func checkLandTarget(ctx context.Context, repo, onto string) error {
	err := dispatch.CheckLandTarget(ctx, repo, onto)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, dispatch.ErrOntoCheckedOut):
		return kinded(KindConflict, err)
	case ctx.Err() != nil:
		return err
	}
	return kinded(KindRefused, err)
}

// PrepareLand sets up a land of o's plan onto the branch onto, as
// statgraph land and StartLand do: onto is checked first (a branch, not
// checked out: dispatch.CheckLandTarget), then the plan is prepared as
// for a run on workers (Prepare with OnWorkers: land checks its own
// sandbox, and a run's setup checks are about the tasks still to run,
// which land does not run). The caller calls the Dispatcher's Land.
func PrepareLand(ctx context.Context, o PrepareOptions, onto string) (*Prepared, error) {
	if err := checkLandTarget(ctx, o.Plan.Repo, onto); err != nil {
		return nil, err
	}
	o.OnWorkers = true
	return Prepare(ctx, o)
}

// StartLand begins landing the plan's done tasks onto the branch onto in
// this process (dispatch.Dispatcher.Land, as statgraph land does) and
// returns once it is going, in the run slot Start uses: one run or land
// at a time, refused with ErrRunning while a run holds the plan; Stop
// stops it (the target stays at a tip that passed). A conflict or a
// failing check on the merge goes to the task's agent as Start's runs do,
// with its escalations as Questions. Its outcome is the last run's
// (Run().Landing) and LandQueues shows it. A target that is no branch is
// refused, one checked out is a conflict (dispatch.ErrOntoCheckedOut),
// both before anything starts.
func (c *Control) StartLand(ctx context.Context, onto string) error {
	return c.begin(ctx, onto, func(ctx context.Context) (*Prepared, error) {
		if err := checkLandTarget(ctx, c.plan.Repo, onto); err != nil {
			return nil, err
		}
		return c.prepare(ctx, PrepareOptions{OnWorkers: true})
	}, func(ctx context.Context, p *Prepared) (RunInfo, error) {
		l, err := p.Dispatcher.Land(ctx, onto)
		return RunInfo{Landing: &l}, err
	}, nil)
}
