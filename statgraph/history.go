package statgraph

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Snapshot is a thread's state at one checkpoint.
type Snapshot[S any] struct {
	Thread       string // the thread the checkpoint belongs to
	CheckpointID int64
	Parent       int64
	Step         int
	Source       string // "input", "loop", "update" or "fork": see Checkpoint.Source
	Created      time.Time
	State        S
	Next         []string // nodes that run next; empty when the run finished
	Interrupts   []Interruption
	Counters     map[string]int // executions per node so far on the thread, its earlier runs and other branches included
	// Subgraphs holds, in a snapshot returned by State, the latest
	// snapshot of each subgraph node's child run (LangGraph's
	// get_state(subgraphs=True)): for a node in Next, of the run it
	// stopped or paused inside; for another node, of its last run. Its
	// key is the node's name, or "<node>[j]" for the node's j-th further
	// Send task in Next (as in interrupt IDs); its State holds the child's
	// state, of the child graph's type, and its Thread the child's thread,
	// which the child graph compiled WithCheckpointer on the same store
	// reads with History. It is nil when no child run has a checkpoint,
	// and in the snapshots History returns.
	Subgraphs map[string]Snapshot[any]
}

// State returns the latest snapshot of thread. It reads the latest
// checkpoint and the rows its state is rebuilt from with one Range, so it
// costs about as much as reading those rows. It returns an error wrapping
// ErrNoCheckpoint when the thread has none, and ErrCorruptCheckpoint when
// they do not decode. Safe for concurrent use, also with runs of the thread.
func (g *Graph[S]) State(ctx context.Context, thread string) (Snapshot[S], error) {
	return g.latest(ctx, g.checkpointer(), thread)
}

// History returns the snapshots of thread, newest first: those of the
// checkpoints with IDs below before (before <= 0: from the latest), at most
// limit of them when limit > 0. History(ctx, thread, 0, 0) is the whole
// thread. To list a long thread page by page, pass the CheckpointID of the
// last snapshot of a page as before for the next; an empty page means there
// are no more.
//
// It reads the page's checkpoints and the rows the oldest of them is
// rebuilt from with one Range each, then walks the page oldest first,
// applying each checkpoint's delta to its parent's state, so it costs about
// as much as reading those rows and decoding each once; memory holds one
// state's chain plus the page. The snapshots' states share what did not
// change between them (a field left as it was; the elements a slice had
// before a step appended to it, each snapshot's slice ending at its own
// length), as the states nodes pass on do: treat them as read-only, and
// copy a slice before writing into its elements. This keeps a thread whose
// state grows by appending linear to list. Errors are as for State; it is
// safe for concurrent use.
func (g *Graph[S]) History(ctx context.Context, thread string, before int64, limit int) ([]Snapshot[S], error) {
	store := g.checkpointer()
	to := int64(0) // no bound
	if before > 0 {
		if to = before - 1; to < 1 {
			return nil, nil
		}
	}
	list, err := store.Range(ctx, thread, 1, to, limit)
	if err != nil || len(list) == 0 {
		return nil, err
	}
	chain, err := readChain(ctx, store, list[len(list)-1], list...)
	if err != nil {
		return nil, err
	}
	// Oldest first: each checkpoint's state and counters are its parent's,
	// from the page, plus its own change.
	at := make(map[int64]int, len(list)) // checkpoint id -> index in out
	out := make([]Snapshot[S], len(list))
	w := deltaWalk[S]{walk: growWalk{owned: map[int]bool{}}}
	w.grow, _ = g.codec.(growingApplier[S])
	for i := len(list) - 1; i >= 0; i-- {
		c := list[i]
		var s Snapshot[S]
		if p, ok := at[c.Parent]; ok {
			s, err = g.nextSnapshot(ctx, chain, c, &out[p], list[p], &w)
		} else {
			s, err = g.snapshot(ctx, chain, c)
		}
		if err != nil {
			return nil, err
		}
		out[i], at[c.ID] = s, i
	}
	return out, nil
}

// snapshot returns the snapshot of checkpoint cp, loading what it needs
// through store.
func (g *Graph[S]) snapshot(ctx context.Context, store Checkpointer, cp *Checkpoint) (Snapshot[S], error) {
	state, err := loadState(ctx, store, g.codec, cp)
	if err != nil {
		return Snapshot[S]{}, err
	}
	s := g.snapshotOf(cp, state)
	if s.Counters, err = loadCounters(ctx, store, cp); err != nil {
		return Snapshot[S]{}, err
	}
	return s, nil
}

// growingApplier is implemented by codecs whose deltas History can apply
// with appends in place (see jsonCodec.applyGrowing).
type growingApplier[S any] interface {
	applyGrowing(live S, delta []byte, w *growWalk) (next, out S, err error)
}

// deltaWalk is History's state between one snapshot and the next: the
// state of checkpoint id as the codec's walk holds it, whose slices the
// walk may append to in place.
type deltaWalk[S any] struct {
	grow growingApplier[S] // nil: each delta is applied with ApplyDelta
	id   int64             // the checkpoint live is the state of; 0 for none
	live S
	walk growWalk // see jsonCodec.applyGrowing
}

// apply returns the state of checkpoint cp, a delta against its parent's
// state prev.
func (w *deltaWalk[S]) apply(dc deltaCodec[S], cp *Checkpoint, prev S) (S, error) {
	if w.grow == nil {
		return dc.ApplyDelta(prev, cp.State)
	}
	if w.id == 0 || cp.Parent != w.id { // a full state or a fork came between
		w.live = prev
		clear(w.walk.owned)
	}
	w.id = 0
	next, out, err := w.grow.applyGrowing(w.live, cp.State, &w.walk)
	if err != nil {
		return out, err
	}
	w.live, w.id = next, cp.ID
	return out, nil
}

// nextSnapshot returns the snapshot of checkpoint cp whose parent pc has
// snapshot prev: one delta applied to prev's state (through w), prev's
// counters plus pc's frontier.
func (g *Graph[S]) nextSnapshot(ctx context.Context, store Checkpointer, cp *Checkpoint, prev *Snapshot[S], pc *Checkpoint, w *deltaWalk[S]) (Snapshot[S], error) {
	var state S
	switch {
	case cp.Value != nil || !cp.Delta:
		var err error
		if state, err = loadState(ctx, store, g.codec, cp); err != nil {
			return Snapshot[S]{}, err
		}
	default:
		dc, ok := g.codec.(deltaCodec[S])
		if !ok {
			return Snapshot[S]{}, corruptCheckpointError(cp, fmt.Errorf("it is a delta but codec %T cannot apply deltas", g.codec))
		}
		var err error
		if state, err = w.apply(dc, cp, prev.State); err != nil {
			return Snapshot[S]{}, corruptCheckpointError(cp, err)
		}
	}
	s := g.snapshotOf(cp, state)
	if cp.Counters != nil {
		s.Counters = maps.Clone(cp.Counters)
	} else {
		s.Counters = maps.Clone(prev.Counters)
		for _, name := range pc.Next {
			s.Counters[name]++
		}
	}
	return s, nil
}

// snapshotOf is the snapshot of cp with state, without counters.
func (g *Graph[S]) snapshotOf(cp *Checkpoint, state S) Snapshot[S] {
	s := Snapshot[S]{
		Thread: cp.Thread, CheckpointID: cp.ID, Parent: cp.Parent, Step: cp.Step, Source: cp.Source, Created: cp.Created,
		State: state, Next: cp.Next,
	}
	for _, in := range cp.Interrupts {
		if slices.ContainsFunc(cp.Pending, func(pw PendingWrite) bool { return pw.Node == resumeRecord+in.ID }) {
			continue // answered by a resume that failed: the thread continues without WithResume
		}
		s.Interrupts = append(s.Interrupts, Interruption{ID: in.ID, Node: in.Node, When: in.When, Payload: in.Payload})
	}
	return s
}

// UpdateState writes a new checkpoint for thread whose state is update
// merged into the latest state (through the reducer, or replacing it when
// the graph has none), as if node asNode had returned it: the next nodes are
// the ones asNode's edges lead to, and the Sends pending from the step
// before are replaced by those asNode's routers or Command send now (an
// update as the agent whose answer calls no tool clears the pending Send
// to the tool, as LangGraph's update_state does with the node it infers).
// With asNode "" the next nodes and pending Sends stay as they were. With
// asNode End nothing runs next: the thread is finished and any pending
// interrupt dismissed. The next Invoke on the thread continues
// from there. It returns the new checkpoint's id.
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
		return 0, fmt.Errorf("%w: UpdateState needs a graph compiled WithCheckpointer", errNoCheckpointer)
	}
	r.saver = &saver[S]{g: g, cp: g.cfg.checkpointer, thread: thread}
	latest, err := g.cfg.checkpointer.Get(ctx, thread, 0)
	if err != nil {
		return 0, fmt.Errorf("statgraph: update state of thread %q: %w", thread, err)
	}
	head, lastID := latest, latest.ID
	if latest, err = r.forkBase(latest); err != nil {
		return 0, err
	}
	chain, err := readChain(ctx, g.cfg.checkpointer, latest)
	if err != nil {
		return 0, err
	}
	state, err := loadState(ctx, chain, g.codec, latest)
	if err != nil {
		return 0, err
	}
	r.saver.lastID, r.saver.parent, r.saver.prev, r.saver.havePrev = lastID, latest.ID, state, true
	r.saver.based(latest)
	if head != latest { // the thread's counters, not the fork base's: see run.loadCounters
		if chain, err = readChain(ctx, g.cfg.checkpointer, head); err != nil {
			return 0, err
		}
	}
	if err := r.loadCounters(ctx, chain, head); err != nil {
		return 0, err
	}
	if _, err := r.loadRecords(ctx, latest); err != nil {
		return 0, err
	}
	if g.reducer != nil {
		r.state = g.reducer(state, update)
	} else {
		r.state = update
	}
	var ints []Interruption
	switch asNode {
	case End:
		// The thread is finished: nothing runs next and any pending
		// interrupt or Send is dismissed.
		if q := r.tq; q != nil {
			q.sends, q.failures = nil, nil
		}
	case "":
		for _, name := range r.unsent(latest.Next) { // the Sends are kept as loaded
			r.next = append(r.next, g.byName[name])
		}
		for _, in := range latest.Interrupts {
			ints = append(ints, Interruption{ID: in.ID, Node: in.Node, When: in.When, Payload: in.Payload})
		}
	default:
		i, ok := g.byName[asNode]
		if !ok {
			return 0, fmt.Errorf("statgraph: UpdateState as node %q: the graph has no such node", asNode)
		}
		r.step = latest.Step
		if q := r.tq; q != nil { // the pending tasks are replaced by asNode's
			q.sends, q.failures = nil, nil
		}
		if err := r.route(g.nodes[i]); err != nil {
			return 0, err
		}
		if q := r.tq; q != nil {
			q.sends, q.nextSends = q.nextSends, nil
		}
	}
	if err := r.saveStep(sourceUpdate, latest.Step, r.next, nil, ints); err != nil {
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

// noCheckpointer answers every call with errNoCheckpointer.
type noCheckpointer struct{}

func (noCheckpointer) Put(context.Context, *Checkpoint) error { return errNoCheckpointer }
func (noCheckpointer) Get(context.Context, string, int64) (*Checkpoint, error) {
	return nil, errNoCheckpointer
}
func (noCheckpointer) Range(context.Context, string, int64, int64, int) ([]*Checkpoint, error) {
	return nil, errNoCheckpointer
}
func (noCheckpointer) Delete(context.Context, string, int64) (int, error) {
	return 0, errNoCheckpointer
}
func (noCheckpointer) PutWrites(context.Context, string, int64, []PendingWrite) error {
	return errNoCheckpointer
}
