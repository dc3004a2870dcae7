package statgraph

import (
	"encoding/json"
	"fmt"
)

// gateExtra is the JSON kept in Checkpoint.Extra for a graph with gates.
type gateExtra struct {
	Verdicts []Verdict     `json:"verdicts,omitempty"` // waiting for their gate
	Targets  []targetState `json:"targets,omitempty"`
	Tries    []tryJSON     `json:"tries,omitempty"`
	Gates    []GateOutcome `json:"gates,omitempty"`
	Warnings []Warning     `json:"warnings,omitempty"`
}

type tryJSON struct {
	Node     string `json:"node"`
	Context  int    `json:"context"`
	Try      int    `json:"try"`
	Step     int    `json:"step"`
	Output   []byte `json:"output"` // encoded with the graph's Codec
	Feedback string `json:"feedback,omitempty"`
}

// extra returns the gate state encoded for a checkpoint. The encoding is
// reused while nothing changed, and each attempt's output is encoded once.
func (gs *gateRun[S]) extra() ([]byte, error) {
	if !gs.dirty && gs.cache != nil {
		return gs.cache, nil
	}
	x := gateExtra{Targets: gs.tg, Gates: gs.outcomes(), Warnings: gs.warnings}
	for _, vs := range gs.verdicts {
		if vs.ok {
			x.Verdicts = append(x.Verdicts, vs.v)
		}
	}
	x.Tries = make([]tryJSON, len(gs.history))
	for i := range gs.history {
		t := &gs.history[i]
		if t.enc == nil {
			b, err := gs.g.codec.Marshal(t.out)
			if err != nil {
				return nil, fmt.Errorf("attempt %d of node %q: %w", t.try, t.node, err)
			}
			t.enc = b
		}
		x.Tries[i] = tryJSON{Node: t.node, Context: t.context, Try: t.try, Step: t.step, Output: t.enc, Feedback: t.feedback}
	}
	b, err := json.Marshal(x)
	if err != nil {
		return nil, err
	}
	gs.cache, gs.dirty = b, false
	return b, nil
}

// load restores the gate state saved in checkpoint c. Entries naming nodes
// the graph no longer has are dropped.
func (gs *gateRun[S]) load(c *Checkpoint) error {
	if len(c.Extra) == 0 {
		return nil
	}
	var x gateExtra
	if err := json.Unmarshal(c.Extra, &x); err != nil {
		return corruptExtra(c, err)
	}
	for _, v := range x.Verdicts {
		if i, ok := gs.g.byName[v.Validator]; ok && gs.g.nodes[i].val != nil {
			gs.verdicts[gs.g.nodes[i].val.slot] = verdictSlot{v: v, ok: true}
		}
	}
	for _, t := range x.Targets {
		for s, spec := range gs.gg.targets {
			if spec.name == t.Node {
				gs.tg[s] = t
			}
		}
	}
	gs.history = gs.history[:0]
	for _, t := range x.Tries {
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
	for i := range x.Gates {
		gs.log = append(gs.log, &x.Gates[i])
	}
	gs.warnings = x.Warnings
	gs.cache, gs.dirty = c.Extra, false
	return nil
}

func corruptExtra(c *Checkpoint, err error) error {
	return fmt.Errorf("%w: thread %q checkpoint %d: gate state: %w", ErrCorruptCheckpoint, c.Thread, c.ID, err)
}

// gateRecord decodes the gate decisions and warnings of checkpoint c, for
// snapshots.
func gateRecord(c *Checkpoint) ([]GateOutcome, []Warning, error) {
	if len(c.Extra) == 0 {
		return nil, nil, nil
	}
	var x struct {
		Gates    []GateOutcome `json:"gates"`
		Warnings []Warning     `json:"warnings"`
	}
	if err := json.Unmarshal(c.Extra, &x); err != nil {
		return nil, nil, corruptExtra(c, err)
	}
	return x.Gates, x.Warnings, nil
}
