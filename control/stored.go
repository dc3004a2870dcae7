package control

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/tasks"
)

// stored is what Tasks takes from a unit's last checkpoint.
type stored struct {
	phase         string
	tokens, retry int
	usage         llm.Usage
}

// storedCache keeps, per unit, what its last checkpoint said and the
// status the unit had when it was read, so that a poll reads the run store
// only for units in progress and units whose status changed since (the
// tasks file or the results journal moved them): a 10,000-task plan with
// a few tasks running costs a few reads per poll, not 10,000. It is safe
// for concurrent use.
type storedCache struct {
	mu    sync.Mutex
	units map[string]storedEntry
}

type storedEntry struct {
	status string // the unit's status when read
	stored
}

// read returns unit's stored state, from the cache when the unit is not
// in progress and its status is the one it had when read, else from g,
// at plan's thread of unit (the zero stored when the unit has no
// checkpoint). It fails with the store's error.
func (sc *storedCache) read(ctx context.Context, g *statgraph.Graph[agents.TaskState], plan dispatch.Plan, unit, status string) (stored, error) {
	if status != tasks.StatusInProgress {
		sc.mu.Lock()
		e, ok := sc.units[unit]
		sc.mu.Unlock()
		if ok && e.status == status {
			return e.stored, nil
		}
	}
	var s stored
	snap, err := g.State(ctx, plan.Thread(unit))
	switch {
	case err == nil:
		s = stored{phase: phaseOf(snap), tokens: snap.State.Tokens, retry: snap.State.RetryCount, usage: snap.State.Spend()}
	case !errors.Is(err, statgraph.ErrNoCheckpoint):
		return stored{}, err
	}
	sc.mu.Lock()
	if sc.units == nil {
		sc.units = map[string]storedEntry{}
	}
	sc.units[unit] = storedEntry{status: status, stored: s}
	sc.mu.Unlock()
	return s, nil
}

// phaseOf returns the phase of a unit's last checkpoint:
// PhaseAwaitingApproval when its run stopped (or waits) before the node
// that asks for its plan's approval, else the state's own phase.
func phaseOf(snap statgraph.Snapshot[agents.TaskState]) string {
	if slices.Contains(snap.Next, agents.NodeApprove) {
		return PhaseAwaitingApproval
	}
	return snap.State.Phase
}

// forget drops every entry: the next read of each unit goes to the store
// (after a reset, an added task, or a run of this process ended).
func (sc *storedCache) forget() {
	sc.mu.Lock()
	clear(sc.units)
	sc.mu.Unlock()
}

// errStoreRead says which unit's run could not be read from where.
func errStoreRead(unit, store string, err error) error {
	return fmt.Errorf("read the run of task %s from %s: %w", unit, store, err)
}
