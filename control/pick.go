package control

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/tasks"
)

// ErrNotPickable is returned (wrapped) by Pick for a task that did not run
// as best-of-N or a candidate that cannot win (it does not exist, or its
// blocking checks did not pass).
var ErrNotPickable = errors.New("cannot pick that candidate")

// Pick makes candidate k of best-of-N task id its winner, as statgraph
// pick does: the task's branch moves to the candidate's commit (the old
// winner stays on its own candidate branch), the task's record in the run
// store becomes the candidate's state with the choice marked "picked by a
// person", and the tasks file gets the candidate's retry_count and
// error_history. It runs under the plan's lock, so it fails with
// ErrRunning while a run of the plan is going on, and with ErrNotPickable
// for a task without candidates or a candidate that did not pass; nothing
// is changed then. Picking the winner changes nothing. It returns the new
// selection.
func (c *Control) Pick(ctx context.Context, id string, k int) (agents.Selection, error) {
	var sel agents.Selection
	err := c.locked(func(f *tasks.File) (bool, error) {
		if _, ok := f.Task(id); !ok {
			return false, fmt.Errorf("task %s: %w in %s", id, ErrNoTask, c.o.File)
		}
		g, _, err := c.reader(ctx, false)
		if err != nil {
			return false, err
		}
		if g == nil {
			return false, fmt.Errorf("task %s has %w: nothing has run yet (no run store at %s)", id, ErrNoRun, c.o.Store)
		}
		snap, err := g.State(ctx, c.plan.Thread(id))
		if errors.Is(err, statgraph.ErrNoCheckpoint) {
			return false, fmt.Errorf("task %s has %w in %s", id, ErrNoRun, c.where())
		}
		if err != nil {
			return false, err
		}
		old := snap.State.Selection
		if old == nil || old.Winner == 0 {
			return false, kinded(KindConflict, fmt.Errorf("task %s: %w: it has no winning candidate to replace (it did not run with \"attempts\", or none of its candidates passed)", id, ErrNotPickable))
		}
		sel = *old
		var was, to *agents.Candidate
		var passed []string
		for i := range sel.Candidates {
			switch cd := &sel.Candidates[i]; {
			case cd.K == old.Winner:
				was = cd
			case cd.K == k:
				to = cd
			}
			if sel.Candidates[i].Passed {
				passed = append(passed, fmt.Sprint(sel.Candidates[i].K))
			}
		}
		if k == old.Winner {
			return false, nil
		}
		if to == nil || !to.Passed || to.Commit == "" {
			why := "task %s has no candidate %d"
			if to != nil {
				why = fmt.Sprintf("task %%s: candidate %%d did not pass its blocking checks (%s: %s)", to.Status, to.Reason)
			}
			return false, kinded(KindConflict, fmt.Errorf("%w: "+why+"; the candidates that passed are %s", ErrNotPickable, id, k, strings.Join(passed, ", ")))
		}
		cs, err := g.State(ctx, c.plan.CandidateThread(id, k))
		if err != nil {
			return false, fmt.Errorf("task %s: read candidate %d from the run store: %w", id, k, err)
		}
		if err := workspace.MoveBranch(ctx, c.plan.Repo, c.plan.Branch(id), was.Commit, to.Commit); err != nil {
			return false, err
		}
		sel.Winner, sel.Why = k, fmt.Sprintf("picked by a person (was candidate %d, %s)", was.K, old.Why)
		state := cs.State
		state.Selection = &sel
		if err := dispatch.RecordSelection(ctx, c.checkpointer(), c.plan, id, state); err != nil {
			return false, err
		}
		reason := fmt.Sprintf("candidate %d of %d picked by a person", k, len(sel.Candidates))
		return true, f.Apply(id, tasks.Outcome{Status: tasks.StatusDone, Reason: reason, RetryCount: state.RetryCount, ErrorHistory: state.ErrorHistory})
	})
	if err == nil {
		c.hub.resyncAll()
	}
	return sel, err
}

// checkpointer returns the run store the reads use (see reader), which
// reader opened.
func (c *Control) checkpointer() statgraph.Checkpointer {
	c.storeMu.Lock()
	defer c.storeMu.Unlock()
	switch {
	case c.store != nil:
		return c.store
	case c.o.Checkpointer != nil:
		return c.o.Checkpointer
	}
	return c.queue.Checkpointer
}
