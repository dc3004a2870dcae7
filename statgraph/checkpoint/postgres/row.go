package postgres

import (
	"time"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/internal/rowenc"
)

// columns are the checkpoint columns in the order rows are written; reads
// select them without tid.
const columns = "tid, id, parent, step, source, created, delta, state, next, pending, counters, interrupts, resumes, extra, base"

// colTid is the index of tid in rowArgs' result.
const colTid = 0

// rowArgs returns the values of cp, the checkpoint of thread number tid, in
// the order of columns. Empty collections are stored as NULL; cp.Value and
// PendingWrite.Value are not stored.
func rowArgs(tid int64, cp *statgraph.Checkpoint) ([]any, error) {
	cols, err := rowenc.Encode(cp)
	if err != nil {
		return nil, err
	}
	var created *int64
	if !cp.Created.IsZero() {
		n := cp.Created.UnixNano()
		created = &n
	}
	var base *int64
	if cp.Base > 0 {
		base = &cp.Base
	}
	return []any{tid, cp.ID, cp.Parent, int64(cp.Step), cp.Source, created, cp.Delta, cp.State,
		nullText(cols.Next), nullText(cols.Pending), nullText(cols.Counters), nullText(cols.Interrupts), nullText(cols.Resumes),
		cp.Extra, base}, nil
}

// nullText is s, or NULL when s is empty.
func nullText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// row is one checkpoint row as scanned. Postgres checks the columns'
// types, so what can be damaged is the JSON text, which rowenc checks.
type row struct {
	id, parent, step int64
	source           string
	created          *int64
	delta            bool
	state, extra     []byte
	json             rowenc.Raw
	base             *int64
}

// dest returns the scan targets of r in the order of columns, without tid.
func (r *row) dest() []any {
	return []any{&r.id, &r.parent, &r.step, &r.source, &r.created, &r.delta, &r.state,
		&r.json.Next, &r.json.Pending, &r.json.Counters, &r.json.Interrupts, &r.json.Resumes, &r.extra, &r.base}
}

// checkpoint builds the checkpoint of thread that r holds, decoding its
// JSON columns with dec, the decoder of the read. The scanned byte slices
// are fresh for each row (pgx copies them), so the checkpoint may keep
// them.
func (r *row) checkpoint(thread string, dec *rowenc.Decoder) (*statgraph.Checkpoint, error) {
	cp := &statgraph.Checkpoint{
		Thread: thread, ID: r.id, Parent: r.parent, Step: int(r.step), Source: r.source,
		Delta: r.delta, State: r.state, Extra: r.extra,
	}
	if r.created != nil {
		cp.Created = time.Unix(0, *r.created)
	}
	if r.base != nil {
		cp.Base = *r.base
	}
	if err := dec.Decode(cp, r.json); err != nil {
		return nil, err
	}
	return cp, nil
}
