package statgraph

import (
	"context"
	"fmt"
	"time"
)

// Snapshot is a thread's state at one checkpoint.
type Snapshot[S any] struct {
	CheckpointID int64
	Parent       int64
	Step         int
	Source       string // SourceInput, SourceLoop, SourceUpdate or SourceFork
	Created      time.Time
	State        S
	Next         []string // nodes that run next; empty when the run finished
	Interrupts   []Interruption
	Counters     map[string]int // executions per node so far
	// Gates and Warnings are the run's gate decisions and warnings so far
	// (see Result); empty for a graph without gates. The snapshots of one
	// History call may share these slices' memory: copy them before
	// changing them.
	Gates    []GateOutcome
	Warnings []Warning
}

// State returns the latest snapshot of thread.
func (g *Graph[S]) State(ctx context.Context, thread string) (Snapshot[S], error) {
	cp, err := g.checkpointer().Get(ctx, thread, 0)
	if err != nil {
		return Snapshot[S]{}, err
	}
	return g.snapshot(ctx, cp, nil)
}

// History returns the snapshots of thread, newest first; limit <= 0 means
// all of them.
func (g *Graph[S]) History(ctx context.Context, thread string, limit int) ([]Snapshot[S], error) {
	list, err := g.checkpointer().List(ctx, thread, limit)
	if err != nil {
		return nil, err
	}
	// Oldest first, so that each checkpoint's gate state is its parent's,
	// from memo, plus its own increment.
	memo := map[int64]*gateDoc{}
	out := make([]Snapshot[S], len(list))
	for i := len(list) - 1; i >= 0; i-- {
		s, err := g.snapshot(ctx, list[i], memo)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// snapshot returns the snapshot of checkpoint cp; memo is as for loadExtra.
func (g *Graph[S]) snapshot(ctx context.Context, cp *Checkpoint, memo map[int64]*gateDoc) (Snapshot[S], error) {
	state, err := loadState(ctx, g.checkpointer(), g.codec, cp)
	if err != nil {
		return Snapshot[S]{}, err
	}
	s := Snapshot[S]{
		CheckpointID: cp.ID, Parent: cp.Parent, Step: cp.Step, Source: cp.Source, Created: cp.Created,
		State: state, Next: cp.Next,
	}
	if s.Counters, err = loadCounters(ctx, g.checkpointer(), cp); err != nil {
		return Snapshot[S]{}, err
	}
	if s.Gates, s.Warnings, err = gateRecord(ctx, g.checkpointer(), cp, memo); err != nil {
		return Snapshot[S]{}, err
	}
	for _, in := range cp.Interrupts {
		s.Interrupts = append(s.Interrupts, Interruption{ID: in.ID, Node: in.Node, When: in.When, Payload: in.Payload})
	}
	return s, nil
}

// UpdateState writes a new checkpoint for thread whose state is update
// merged into the latest state (through the reducer, or replacing it when
// the graph has none), as if node asNode had returned it: the next nodes are
// the ones asNode's edges lead to. With asNode "" the next nodes stay as
// they were. The next Invoke on the thread continues from there. It returns
// the new checkpoint's id.
//
// With FromCheckpoint(k) among opts the update is merged into checkpoint
// k's state instead of the latest, forking the thread there (fork.go): the
// new checkpoint's parent is k, and the next Invoke re-runs only what
// follows k.
func (g *Graph[S]) UpdateState(ctx context.Context, thread string, update S, asNode string, opts ...RunOption) (int64, error) {
	r := g.newRun(append(opts, WithThread(thread)))
	r.ctx = ctx
	n := len(g.nodes)
	r.seen, r.counters = make([]int, n), make([]int, n)
	if g.cfg.checkpointer == nil {
		return 0, fmt.Errorf("%w: UpdateState needs a graph compiled WithCheckpointer", ErrNoCheckpointer)
	}
	r.saver = &saver[S]{g: g, cp: g.cfg.checkpointer, thread: thread}
	latest, err := g.cfg.checkpointer.Get(ctx, thread, 0)
	if err != nil {
		return 0, fmt.Errorf("statgraph: update state of thread %q: %w", thread, err)
	}
	lastID := latest.ID
	if latest, err = r.forkBase(latest); err != nil {
		return 0, err
	}
	state, err := loadState(ctx, g.cfg.checkpointer, g.codec, latest)
	if err != nil {
		return 0, err
	}
	r.saver.lastID, r.saver.parent, r.saver.prev, r.saver.havePrev = lastID, latest.ID, state, true
	counters, err := loadCounters(ctx, g.cfg.checkpointer, latest)
	if err != nil {
		return 0, err
	}
	for name, c := range counters {
		if i, ok := g.byName[name]; ok {
			r.counters[i] = c
		}
	}
	if r.gs != nil {
		if err := r.gs.load(ctx, g.cfg.checkpointer, latest); err != nil {
			return 0, err
		}
	}
	if g.reducer != nil {
		r.state = g.reducer(state, update)
	} else {
		r.state = update
	}
	var ints []Interruption
	if asNode == "" {
		for _, name := range latest.Next {
			r.next = append(r.next, g.byName[name])
		}
		for _, in := range latest.Interrupts {
			ints = append(ints, Interruption{ID: in.ID, Node: in.Node, When: in.When, Payload: in.Payload})
		}
	} else {
		i, ok := g.byName[asNode]
		if !ok {
			return 0, fmt.Errorf("statgraph: UpdateState as node %q: the graph has no such node", asNode)
		}
		r.step = latest.Step
		if err := r.route(g.nodes[i]); err != nil {
			return 0, err
		}
	}
	if err := r.saveStep(SourceUpdate, latest.Step, r.next, nil, ints); err != nil {
		return 0, err
	}
	return r.saver.lastID, nil
}

func (g *Graph[S]) checkpointer() Checkpointer {
	if g.cfg.checkpointer == nil {
		return noCheckpointer{}
	}
	return g.cfg.checkpointer
}

// noCheckpointer answers every call with ErrNoCheckpointer.
type noCheckpointer struct{}

func (noCheckpointer) Put(context.Context, *Checkpoint) error { return ErrNoCheckpointer }
func (noCheckpointer) Get(context.Context, string, int64) (*Checkpoint, error) {
	return nil, ErrNoCheckpointer
}
func (noCheckpointer) List(context.Context, string, int) ([]*Checkpoint, error) {
	return nil, ErrNoCheckpointer
}
func (noCheckpointer) DeleteThread(context.Context, string) error { return ErrNoCheckpointer }
