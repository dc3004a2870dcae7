package sqlite

import (
	"fmt"
	"time"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/internal/rowenc"
)

// columns are the checkpoint columns in the order rows are written and read.
const columns = "key, parent, step, source, created, delta, state, next, pending, counters, interrupts, resumes, extra, base"

// Indexes into a row in the order of columns.
const (
	colKey = iota
	colParent
	colStep
	colSource
	colCreated
	colDelta
	colState
	colNext
	colPending
	colCounters
	colInterrupts
	colResumes
	colExtra
	colBase
	numColumns
)

// Keys pack a thread number and a checkpoint id into one integer.
const (
	idBits = 32
	maxID  = 1<<idBits - 1
)

func rowKey(tid, id int64) int64 { return tid<<idBits | id }

// rowArgs returns the values of cp, the checkpoint of thread number tid, in
// the order of columns. Empty collections are stored as NULL; cp.Value and
// PendingWrite.Value are not stored.
func rowArgs(tid int64, cp *statgraph.Checkpoint) ([]any, error) {
	args := make([]any, numColumns)
	args[colKey] = rowKey(tid, cp.ID)
	args[colParent] = cp.Parent
	args[colStep] = int64(cp.Step)
	args[colSource] = cp.Source
	if !cp.Created.IsZero() {
		args[colCreated] = cp.Created.UnixNano()
	}
	args[colDelta] = boolInt(cp.Delta)
	args[colState] = cp.State
	args[colExtra] = cp.Extra
	if cp.Base > 0 {
		args[colBase] = cp.Base
	}
	cols, err := rowenc.Encode(cp)
	if err != nil {
		return nil, err
	}
	args[colNext] = nullText(cols.Next)
	args[colPending] = nullText(cols.Pending)
	args[colCounters] = nullText(cols.Counters)
	args[colInterrupts] = nullText(cols.Interrupts)
	args[colResumes] = nullText(cols.Resumes)
	return args, nil
}

// nullText is s, or NULL when s is empty.
func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// decodeRow fills cp from a row scanned into vals, checking the
// type of every column. thread is the thread the row was read for; dec
// decodes the JSON columns of the rows of one read. A row
// that does not decode gives an error wrapping statgraph.ErrCorruptCheckpoint
// that names the file, the thread and the checkpoint id.
func (s *Store) decodeRow(thread string, vals *[numColumns]any, dec *rowenc.Decoder, cp *statgraph.Checkpoint) error {
	key, _ := vals[colKey].(int64) // an INTEGER PRIMARY KEY is always an integer
	id := key & maxID
	d := rowDecoder{vals: vals}
	*cp = statgraph.Checkpoint{Thread: thread, ID: id}
	cp.Parent = d.int(colParent)
	cp.Step = int(d.int(colStep))
	cp.Source = d.text(colSource)
	if vals[colCreated] != nil {
		cp.Created = time.Unix(0, d.int(colCreated))
	}
	switch delta := d.int(colDelta); delta {
	case 0, 1:
		cp.Delta = delta == 1
	default:
		d.fail(colDelta, fmt.Errorf("holds %d, want 0 or 1", delta))
	}
	cp.State = d.bytes(colState)
	cp.Extra = d.bytes(colExtra)
	if vals[colBase] != nil {
		cp.Base = d.int(colBase)
	}
	raw := rowenc.Raw{Next: d.json(colNext), Pending: d.json(colPending), Counters: d.json(colCounters),
		Interrupts: d.json(colInterrupts), Resumes: d.json(colResumes)}
	if d.err == nil {
		d.err = dec.Decode(cp, raw)
	}
	if d.err != nil {
		return fmt.Errorf("%w: thread %q checkpoint %d in %s: %w; delete the thread or restore the file from a backup",
			statgraph.ErrCorruptCheckpoint, thread, id, s.path, d.err)
	}
	return nil
}

// columnNames are the names of the columns, by index, for error messages.
var columnNames = [numColumns]string{
	"key", "parent", "step", "source", "created", "delta",
	"state", "next", "pending", "counters", "interrupts", "resumes", "extra", "base",
}

// rowDecoder converts the columns of one row, keeping the first error.
type rowDecoder struct {
	vals *[numColumns]any
	err  error
}

func (d *rowDecoder) fail(col int, err error) {
	if d.err == nil {
		d.err = fmt.Errorf("column %s %w", columnNames[col], err)
	}
}

func (d *rowDecoder) int(col int) int64 {
	v, ok := d.vals[col].(int64)
	if !ok {
		d.fail(col, fmt.Errorf("holds %s, want an integer", describe(d.vals[col])))
	}
	return v
}

func (d *rowDecoder) text(col int) string {
	switch v := d.vals[col].(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	d.fail(col, fmt.Errorf("holds %s, want text", describe(d.vals[col])))
	return ""
}

// bytes returns a BLOB column; NULL is nil.
func (d *rowDecoder) bytes(col int) []byte {
	switch v := d.vals[col].(type) {
	case *blob:
		if v.other != nil {
			d.fail(col, fmt.Errorf("holds %s, want bytes", describe(v.other)))
		}
		return v.b
	case nil:
		return nil
	case []byte:
		return v
	case string:
		return []byte(v)
	}
	d.fail(col, fmt.Errorf("holds %s, want bytes", describe(d.vals[col])))
	return nil
}

// blobColumns are the columns scanned into a blob.
var blobColumns = [...]int{colState, colExtra}

// blob is the scan target of a BLOB column: it copies the column into an
// arena shared by the rows of one read, where a scan into an any would
// copy it once more into an allocation of its own per row (the driver's
// copy is only valid until the next row). The checkpoints keep subslices
// of the arena.
type blob struct {
	arena *arena
	b     []byte // nil for NULL
	other any    // a value of another type, reported by decodeRow
}

// Scan implements sql.Scanner.
func (b *blob) Scan(src any) error {
	b.b, b.other = nil, nil
	switch v := src.(type) {
	case nil:
	case []byte:
		b.b = keep(b.arena, v)
	case string:
		b.b = keep(b.arena, v)
	default:
		b.other = v
	}
	return nil
}

// arena holds the blobs of one read in a few large allocations. The
// memory of a chunk stays in use while any checkpoint read with it does.
type arena struct{ buf []byte }

// Sizes of arena chunks: they double up to arenaChunk; blobs above
// arenaOwn bytes get an allocation of their own, so that a chunk wastes
// little at its end.
const (
	arenaChunk = 64 << 10
	arenaOwn   = 8 << 10
)

// keep returns a copy of v in a's memory, with no room to append into the
// next blob; empty is not nil.
func keep[T string | []byte](a *arena, v T) []byte {
	switch {
	case len(v) == 0:
		return []byte{}
	case len(v) > arenaOwn:
		return append([]byte(nil), v...)
	case cap(a.buf)-len(a.buf) < len(v): // chunks double up to arenaChunk, so one row's read takes what it needs
		a.buf = make([]byte, 0, max(len(v), min(2*cap(a.buf), arenaChunk)))
	}
	start := len(a.buf)
	a.buf = append(a.buf, v...)
	return a.buf[start:len(a.buf):len(a.buf)]
}

// jsonColumns are the columns scanned into a jsonText.
var jsonColumns = [...]int{colNext, colPending, colCounters, colInterrupts, colResumes}

// jsonText is the scan target of a JSON column: it copies the column's
// text into a buffer it reuses from row to row, where a scan into an any
// would allocate a string and decodeRow copy it again to bytes. rowenc
// copies what it keeps.
type jsonText struct {
	text  []byte
	null  bool
	other any // a value of another type, reported by decodeRow
}

// Scan implements sql.Scanner.
func (j *jsonText) Scan(src any) error {
	j.text, j.null, j.other = j.text[:0], false, nil
	switch v := src.(type) {
	case nil:
		j.null = true
	case string:
		j.text = append(j.text, v...)
	case []byte:
		j.text = append(j.text, v...)
	default:
		j.other = v
	}
	return nil
}

// json returns the text of a JSON column for rowenc.Decode; NULL is nil.
func (d *rowDecoder) json(col int) []byte {
	switch v := d.vals[col].(type) {
	case *jsonText:
		switch {
		case v.other != nil:
			d.fail(col, fmt.Errorf("holds %s, want JSON text", describe(v.other)))
			return nil
		case v.null:
			return nil
		case v.text == nil:
			return []byte{} // empty text, not NULL
		}
		return v.text
	case nil:
		return nil
	case string:
		return []byte(v)
	case []byte:
		return v
	}
	d.fail(col, fmt.Errorf("holds %s, want JSON text", describe(d.vals[col])))
	return nil
}

// describe names the SQLite type of a scanned value.
func describe(v any) string {
	switch v.(type) {
	case nil:
		return "NULL"
	case int64:
		return "an integer"
	case float64:
		return "a real"
	case string:
		return "text"
	case []byte:
		return "a blob"
	}
	return fmt.Sprintf("a %T", v)
}
