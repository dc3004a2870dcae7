package statgraph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// gateDoc is the gate state of one checkpoint, rebuilt from its Extra and
// those of its ancestors (see gatepersist.go).
type gateDoc struct {
	verdicts []Verdict
	targets  []targetState
	tries    []tryJSON // nil when loaded without attempts
	gates    []GateOutcome
	warnings []Warning
	n        extraCounts // the lists' lengths, attempts included
	// The chain as written: the size of its full document, and the number
	// and bytes of the increments after it.
	fullBytes, sinceFull, incBytes int
}

// extraLink is one increment of a chain, with its checkpoint.
type extraLink struct {
	c *Checkpoint
	x gateExtra
}

// loadExtra rebuilds the gate state of checkpoint c: it follows Parent
// links back to the nearest full document (or to a checkpoint whose state
// memo holds) and applies the increments forward. With tries false the
// attempts are counted but not kept. A checkpoint without Extra has an
// empty gate state.
//
// memo, when not nil, maps checkpoint ids to their rebuilt state; loadExtra
// adds c's when c has Extra. The documents in it are shared and must not be modified.
//
// Undecodable documents and broken chains return an error wrapping
// ErrCorruptCheckpoint that names the thread and checkpoint; errors of cp
// are returned wrapped as they are.
func loadExtra(ctx context.Context, cp Checkpointer, c *Checkpoint, tries bool, memo map[int64]*gateDoc) (*gateDoc, error) {
	if len(c.Extra) == 0 {
		return &gateDoc{}, nil // not memoised: no increment may follow it
	}
	var chain []extraLink // increments, newest first
	var base *gateDoc
	shared := false // base is memo's: copy its lists before appending
	for cur := c; base == nil; {
		if d, ok := memo[cur.ID]; ok {
			base, shared = d, true
			break
		}
		if len(cur.Extra) == 0 {
			return nil, corruptExtra(chain[len(chain)-1].c, fmt.Errorf("its parent %d, the base of its increment, holds no gate state", cur.ID))
		}
		var x gateExtra
		if err := json.Unmarshal(cur.Extra, &x); err != nil {
			return nil, corruptExtra(cur, err)
		}
		if x.Version > extraVersion {
			return nil, corruptExtra(cur, fmt.Errorf("document version %d is newer than this statgraph reads (%d); read the thread with a newer statgraph", x.Version, extraVersion))
		}
		if x.From == nil {
			base = fullDoc(&x, len(cur.Extra), tries)
			break
		}
		chain = append(chain, extraLink{c: cur, x: x})
		if cur.Parent <= 0 || cur.Parent >= cur.ID {
			return nil, corruptExtra(cur, fmt.Errorf("increment has parent %d, which cannot hold its base", cur.Parent))
		}
		p, err := cp.Get(ctx, cur.Thread, cur.Parent)
		if errors.Is(err, ErrNoCheckpoint) {
			return nil, corruptExtra(cur, fmt.Errorf("its parent %d, the base of its increment, is missing", cur.Parent))
		}
		if err != nil {
			return nil, fmt.Errorf("loading parent %d of checkpoint %d of thread %q: %w", cur.Parent, cur.ID, cur.Thread, err)
		}
		cur = p
	}
	d := base
	if len(chain) > 0 && shared {
		cp := *base
		cp.tries, cp.gates, cp.warnings = slices.Clip(cp.tries), slices.Clip(cp.gates), slices.Clip(cp.warnings)
		d = &cp
	}
	for i := len(chain) - 1; i >= 0; i-- {
		if err := d.apply(&chain[i].x, len(chain[i].c.Extra), tries); err != nil {
			return nil, corruptExtra(chain[i].c, err)
		}
	}
	if memo != nil {
		memo[c.ID] = d
	}
	return d, nil
}

// fullDoc is the gate state held by full document x of size bytes.
func fullDoc(x *gateExtra, size int, tries bool) *gateDoc {
	d := &gateDoc{
		verdicts: x.Verdicts, targets: x.Targets, gates: x.Gates, warnings: x.Warnings,
		n:         extraCounts{Tries: len(x.Tries), Gates: len(x.Gates), Warnings: len(x.Warnings)},
		fullBytes: size,
	}
	if tries {
		d.tries = x.Tries
	}
	return d
}

// apply adds increment x, of size bytes, to d. Appending to a clipped list
// copies it, so lists shared with a memo are never written.
func (d *gateDoc) apply(x *gateExtra, size int, tries bool) error {
	if *x.From != d.n {
		return fmt.Errorf("increment follows %d attempts, %d gate decisions and %d warnings, but its parent has %d, %d and %d",
			x.From.Tries, x.From.Gates, x.From.Warnings, d.n.Tries, d.n.Gates, d.n.Warnings)
	}
	d.verdicts, d.targets = x.Verdicts, x.Targets
	d.n.Tries += len(x.Tries)
	d.n.Gates += len(x.Gates)
	d.n.Warnings += len(x.Warnings)
	if tries {
		if len(x.Feedback) > 0 && cap(d.tries) == len(d.tries) {
			d.tries = slices.Clone(d.tries)
		}
		d.tries = append(d.tries, x.Tries...)
	}
	for _, f := range x.Feedback {
		if f.Index < 0 || f.Index >= d.n.Tries {
			return fmt.Errorf("feedback for attempt %d of %d", f.Index+1, d.n.Tries)
		}
		if tries {
			d.tries[f.Index].Feedback = f.Feedback
		}
	}
	d.gates = append(d.gates, x.Gates...)
	d.warnings = append(d.warnings, x.Warnings...)
	d.sinceFull++
	d.incBytes += size + rowOverhead
	return nil
}

// load restores the gate state saved in checkpoint c, reading c's
// ancestors through cp as needed. Entries naming nodes the graph no longer
// has are dropped. The next checkpoint written is an increment against c.
func (gs *gateRun[S]) load(ctx context.Context, cp Checkpointer, c *Checkpoint) error {
	d, err := loadExtra(ctx, cp, c, true, nil)
	if err != nil {
		return err
	}
	for _, v := range d.verdicts {
		if i, ok := gs.g.byName[v.Validator]; ok && gs.g.nodes[i].val != nil {
			gs.verdicts[gs.g.nodes[i].val.slot] = verdictSlot{v: v, ok: true}
		}
	}
	for _, t := range d.targets {
		for s, spec := range gs.gg.targets {
			if spec.name == t.Node {
				gs.tg[s] = t
			}
		}
	}
	gs.history = gs.history[:0]
	for _, t := range d.tries {
		out, err := gs.g.codec.Unmarshal(t.Output)
		if err != nil {
			return corruptExtra(c, fmt.Errorf("attempt %d of node %q: %w", t.Try, t.Node, err))
		}
		gs.history = append(gs.history, tryRecord[S]{node: t.Node, context: t.Context, try: t.Try, step: t.Step, out: out, feedback: t.Feedback, enc: t.Output})
	}
	for s, t := range gs.tg {
		if t.Last >= len(gs.history) {
			return corruptExtra(c, fmt.Errorf("target %q refers to attempt %d of %d", t.Node, t.Last+1, len(gs.history)))
		}
		gs.tg[s].Node = gs.gg.targets[s].name
	}
	gs.log = gs.log[:0]
	for i := range d.gates {
		gs.log = append(gs.log, &d.gates[i])
	}
	gs.warnings = d.warnings
	gs.save = extraSaver{based: len(c.Extra) > 0, saved: d.n, sinceFull: d.sinceFull, fullBytes: d.fullBytes, incBytes: d.incBytes}
	gs.dirty = false
	return nil
}

func corruptExtra(c *Checkpoint, err error) error {
	return fmt.Errorf("%w: thread %q checkpoint %d: gate state: %w", ErrCorruptCheckpoint, c.Thread, c.ID, err)
}

// gateRecord returns the gate decisions and warnings as of checkpoint c,
// for snapshots; memo is as for loadExtra. The slices may share their
// elements with other snapshots' of the same memo.
func gateRecord(ctx context.Context, cp Checkpointer, c *Checkpoint, memo map[int64]*gateDoc) ([]GateOutcome, []Warning, error) {
	if len(c.Extra) == 0 {
		return nil, nil, nil // no gate state (what loadExtra would give, without allocating)
	}
	d, err := loadExtra(ctx, cp, c, false, memo)
	if err != nil {
		return nil, nil, err
	}
	return d.gates, d.warnings, nil
}
