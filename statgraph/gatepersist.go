package statgraph

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// The gate state of a run is kept in Checkpoint.Extra as a JSON document.
// Its lists of attempts, gate decisions and warnings only grow, so writing
// them whole at every checkpoint would make a checkpoint cost more the
// longer the run has been going. Like the state (see saver.encode), most
// checkpoints therefore hold an increment: the bounded parts in full (the
// verdicts waiting for their gate, the per-target counters) and, of the
// lists, only the entries added since the parent checkpoint, with the
// lengths the lists have there. A full document is written again once the
// increments since the last one (rowOverhead each included) add up to its
// size, so that the full writes cost, spread over the steps, no more than
// the increments did, and a load reads less than twice the full document's
// bytes (see loadExtra).

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
	// tries, gates and warnings hold the JSON of the list entries encoded
	// so far, by index; nil where not encoded yet or changed since.
	tries, gates, warnings [][]byte
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
	inc := sv.based
	if inc && !gs.dirty && sv.cache != nil && sv.incBytes+len(sv.cache)+rowOverhead < sv.fullBytes {
		sv.next, sv.nextFull = sv.cache, false
		return sv.cache, nil
	}
	x := gateExtra{Version: extraVersion, Targets: gs.tg}
	for _, vs := range gs.verdicts {
		if vs.ok {
			x.Verdicts = append(x.Verdicts, vs.v)
		}
	}
	head, err := json.Marshal(x)
	if err != nil {
		return nil, err
	}
	head = head[:len(head)-1] // the lists follow
	if inc {
		from := sv.saved
		b, err := gs.encodeExtra(head, &from)
		if err != nil {
			return nil, err
		}
		if sv.incBytes+len(b)+rowOverhead < sv.fullBytes {
			sv.next, sv.nextFull = b, false
			return b, nil
		}
	}
	b, err := gs.encodeExtra(head, nil)
	if err != nil {
		return nil, err
	}
	sv.next, sv.nextFull = b, true
	return b, nil
}

// encodeExtra completes head, an encoded gateExtra without its closing
// brace, with the list entries after from (all of them when from is nil,
// for a full document). Entries are encoded once and kept, so that a full
// document costs a copy of the bytes.
func (gs *gateRun[S]) encodeExtra(head []byte, from *extraCounts) ([]byte, error) {
	sv := &gs.save
	var start extraCounts
	var buf []byte
	if from == nil {
		buf = append(make([]byte, 0, len(head)+sv.fullBytes+sv.incBytes+64), head...)
	} else {
		start = *from
		buf = append(make([]byte, 0, len(head)+256), head...)
		buf = append(buf, `,"from":{"tries":`...)
		buf = strconv.AppendInt(buf, int64(start.Tries), 10)
		buf = append(buf, `,"gates":`...)
		buf = strconv.AppendInt(buf, int64(start.Gates), 10)
		buf = append(buf, `,"warnings":`...)
		buf = strconv.AppendInt(buf, int64(start.Warnings), 10)
		buf = append(buf, '}')
		if len(sv.patched) > 0 {
			fb := make([]feedbackJSON, len(sv.patched))
			for k, i := range sv.patched {
				fb[k] = feedbackJSON{Index: i, Feedback: gs.history[i].feedback}
			}
			b, err := json.Marshal(fb)
			if err != nil {
				return nil, err
			}
			buf = append(append(buf, `,"feedback":`...), b...)
		}
	}
	buf, err := appendEntries(buf, `,"tries":[`, &sv.tries, start.Tries, len(gs.history), gs.tryEntry)
	if err != nil {
		return nil, err
	}
	if buf, err = appendEntries(buf, `,"gates":[`, &sv.gates, start.Gates, len(gs.log), func(i int) ([]byte, error) {
		return json.Marshal(gs.log[i])
	}); err != nil {
		return nil, err
	}
	if buf, err = appendEntries(buf, `,"warnings":[`, &sv.warnings, start.Warnings, len(gs.warnings), func(i int) ([]byte, error) {
		return json.Marshal(&gs.warnings[i])
	}); err != nil {
		return nil, err
	}
	return append(buf, '}'), nil
}

// tryEntry encodes attempt i, its output with the graph's Codec.
func (gs *gateRun[S]) tryEntry(i int) ([]byte, error) {
	t := &gs.history[i]
	if t.enc == nil {
		b, err := gs.g.codec.Marshal(t.out)
		if err != nil {
			return nil, fmt.Errorf("attempt %d of node %q: %w", t.try, t.node, err)
		}
		t.enc = b
	}
	return json.Marshal(tryJSON{Node: t.node, Context: t.context, Try: t.try, Step: t.step, Output: t.enc, Feedback: t.feedback})
}

// appendEntries appends open (`,"name":[`), the JSON of entries from to
// n-1 and the closing bracket to buf, or nothing when there are none. The
// JSON of entry i is cache[i], made with encode when missing.
func appendEntries(buf []byte, open string, cache *[][]byte, from, n int, encode func(i int) ([]byte, error)) ([]byte, error) {
	if from >= n {
		return buf, nil
	}
	if len(*cache) < n {
		*cache = append(*cache, make([][]byte, n-len(*cache))...)
	}
	buf = append(buf, open...)
	for i := from; i < n; i++ {
		e := (*cache)[i]
		if e == nil {
			var err error
			if e, err = encode(i); err != nil {
				return nil, err
			}
			(*cache)[i] = e
		}
		if i > from {
			buf = append(buf, ',')
		}
		buf = append(buf, e...)
	}
	return append(buf, ']'), nil
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
		sv.incBytes += len(sv.next) + rowOverhead
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
// attempt is encoded again and the next increment carries the feedback
// when the attempt was already written.
func (gs *gateRun[S]) feedbackChanged(i int) {
	sv := &gs.save
	if i < len(sv.tries) {
		sv.tries[i] = nil
	}
	if sv.based && i < sv.saved.Tries && !slices.Contains(sv.patched, i) {
		sv.patched = append(sv.patched, i)
	}
}
