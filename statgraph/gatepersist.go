package statgraph

import (
	"encoding/json"
	"fmt"
	"slices"
)

// The gate state of a run is kept in Checkpoint.Extra as a JSON document.
// Its lists of attempts, gate decisions and warnings only grow, so writing
// them whole at every checkpoint would make a checkpoint cost more the
// longer the run has been going. Like the state (see FullEvery), most
// checkpoints therefore hold an increment: the bounded parts in full (the
// verdicts waiting for their gate, the per-target counters) and, of the
// lists, only the entries added since the parent checkpoint, with the
// lengths the lists have there. A full document is written again once the
// increments since the last one add up to its size, and at least every
// FullEvery checkpoints, so that the full writes cost, spread over the
// steps, no more than the increments did, and a load reads a bounded
// number of rows (see loadExtra).

// extraVersion is the version of the gate-state documents written. Version
// 2 adds increments; a document without "v" (version 1) is full.
const extraVersion = 2

// gateExtra is the JSON kept in Checkpoint.Extra for a graph with gates.
// From is nil in a full document. In an increment it holds the lengths of
// the parent's lists, and Tries, Gates and Warnings hold only the entries
// after those; Feedback then gives the new feedback of earlier attempts
// that a gate sent back since.
type gateExtra struct {
	Version  int            `json:"v,omitempty"`
	Verdicts []Verdict      `json:"verdicts,omitempty"` // waiting for their gate
	Targets  []targetState  `json:"targets,omitempty"`
	From     *extraCounts   `json:"from,omitempty"`
	Tries    []tryJSON      `json:"tries,omitempty"`
	Feedback []feedbackJSON `json:"feedback,omitempty"`
	Gates    []GateOutcome  `json:"gates,omitempty"`
	Warnings []Warning      `json:"warnings,omitempty"`
}

// extraCounts are the lengths of the gate state's growing lists.
type extraCounts struct {
	Tries    int `json:"tries"`
	Gates    int `json:"gates"`
	Warnings int `json:"warnings"`
}

type tryJSON struct {
	Node     string `json:"node"`
	Context  int    `json:"context"`
	Try      int    `json:"try"`
	Step     int    `json:"step"`
	Output   []byte `json:"output"` // encoded with the graph's Codec
	Feedback string `json:"feedback,omitempty"`
}

// feedbackJSON sets the feedback of attempt Index (0 for the run's first).
type feedbackJSON struct {
	Index    int    `json:"index"`
	Feedback string `json:"feedback"`
}

// extraSaver is what a run's gate state remembers between checkpoints in
// order to write the next one as an increment. Like the rest of gateRun it
// is used only by the run's goroutine.
type extraSaver struct {
	based     bool        // saved describes the gate state of the next checkpoint's parent
	saved     extraCounts // the list lengths there
	patched   []int       // attempts before saved.Tries whose feedback changed since
	sinceFull int         // increments written since the last full document
	fullBytes int         // size of that document
	incBytes  int         // bytes of the increments written since it
	// cache is the last increment written when it added nothing to the
	// lists: while nothing changes, the next checkpoint's is the same.
	cache []byte
	// next is the document extra returned, and nextFull whether it is
	// full; stored takes them as written.
	next     []byte
	nextFull bool
}

// counts returns the current lengths of the lists.
func (gs *gateRun[S]) counts() extraCounts {
	return extraCounts{Tries: len(gs.history), Gates: len(gs.log), Warnings: len(gs.warnings)}
}

// extra returns the gate state encoded for the next checkpoint: an
// increment against the last one written or loaded, or the full document
// when the amortisation rule above asks for it. Each attempt's output is
// encoded once. Call stored once the checkpoint is written.
func (gs *gateRun[S]) extra() ([]byte, error) {
	sv := &gs.save
	inc := sv.based && sv.sinceFull < FullEvery-1
	if inc && !gs.dirty && sv.cache != nil && sv.incBytes+len(sv.cache) < sv.fullBytes {
		sv.next, sv.nextFull = sv.cache, false
		return sv.cache, nil
	}
	x := gateExtra{Version: extraVersion, Targets: gs.tg}
	for _, vs := range gs.verdicts {
		if vs.ok {
			x.Verdicts = append(x.Verdicts, vs.v)
		}
	}
	if inc {
		from := sv.saved
		b, err := gs.encodeExtra(&x, &from)
		if err != nil {
			return nil, err
		}
		if sv.incBytes+len(b) < sv.fullBytes {
			sv.next, sv.nextFull = b, false
			return b, nil
		}
	}
	b, err := gs.encodeExtra(&x, nil)
	if err != nil {
		return nil, err
	}
	sv.next, sv.nextFull = b, true
	return b, nil
}

// encodeExtra fills x's lists from the entries after from (all of them
// when from is nil, for a full document) and encodes it.
func (gs *gateRun[S]) encodeExtra(x *gateExtra, from *extraCounts) ([]byte, error) {
	x.From, x.Feedback = from, nil
	start := extraCounts{}
	if from != nil {
		start = *from
		for _, i := range gs.save.patched {
			x.Feedback = append(x.Feedback, feedbackJSON{Index: i, Feedback: gs.history[i].feedback})
		}
	}
	x.Tries = make([]tryJSON, 0, len(gs.history)-start.Tries)
	for i := start.Tries; i < len(gs.history); i++ {
		t := &gs.history[i]
		if t.enc == nil {
			b, err := gs.g.codec.Marshal(t.out)
			if err != nil {
				return nil, fmt.Errorf("attempt %d of node %q: %w", t.try, t.node, err)
			}
			t.enc = b
		}
		x.Tries = append(x.Tries, tryJSON{Node: t.node, Context: t.context, Try: t.try, Step: t.step, Output: t.enc, Feedback: t.feedback})
	}
	x.Gates = make([]GateOutcome, 0, len(gs.log)-start.Gates)
	for _, o := range gs.log[start.Gates:] {
		x.Gates = append(x.Gates, *o)
	}
	x.Warnings = gs.warnings[start.Warnings:]
	return json.Marshal(x)
}

// stored records that the document extra returned was written: the next
// checkpoint's increment follows it.
func (gs *gateRun[S]) stored() {
	sv := &gs.save
	now := gs.counts()
	if sv.nextFull {
		sv.sinceFull, sv.fullBytes, sv.incBytes = 0, len(sv.next), 0
	} else {
		sv.sinceFull++
		sv.incBytes += len(sv.next)
	}
	sv.cache = nil
	if !sv.nextFull && now == sv.saved && len(sv.patched) == 0 {
		sv.cache = sv.next
	}
	sv.based, sv.saved, sv.next = true, now, nil
	sv.patched = sv.patched[:0]
	gs.dirty = false
}

// feedbackChanged notes that the feedback of attempt i changed, so that the
// next increment carries it when the attempt was already written.
func (gs *gateRun[S]) feedbackChanged(i int) {
	sv := &gs.save
	if sv.based && i < sv.saved.Tries && !slices.Contains(sv.patched, i) {
		sv.patched = append(sv.patched, i)
	}
}
