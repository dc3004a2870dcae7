package sqlite

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/statgraph/statgraph/statgraph"
)

// columns are the checkpoint columns in the order rows are written and read.
const columns = "thread, id, parent, step, source, created, delta, state, next, pending, counters, interrupts, resumes, extra"

// Indexes into a row read in the order of columns.
const (
	colThread = iota
	colID
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
	numColumns
)

// pendingJSON is a statgraph.PendingWrite as stored in the pending column;
// the live Value is not stored.
type pendingJSON struct {
	Node   string `json:"n"`
	Update []byte `json:"u,omitempty"`
}

// interruptJSON is a statgraph.PendingInterrupt as stored in the interrupts
// column.
type interruptJSON struct {
	ID      string `json:"i"`
	Node    string `json:"n"`
	When    string `json:"w"`
	Payload []byte `json:"p,omitempty"`
}

// rowArgs returns the values of cp in the order of columns. Empty
// collections are stored as NULL; cp.Value and PendingWrite.Value are not
// stored.
func rowArgs(cp *statgraph.Checkpoint) ([]any, error) {
	args := make([]any, numColumns)
	args[colThread] = cp.Thread
	args[colID] = cp.ID
	args[colParent] = cp.Parent
	args[colStep] = int64(cp.Step)
	args[colSource] = cp.Source
	if !cp.Created.IsZero() {
		args[colCreated] = cp.Created.UnixNano()
	}
	args[colDelta] = boolInt(cp.Delta)
	args[colState] = cp.State
	args[colExtra] = cp.Extra
	var err error
	if len(cp.Next) > 0 {
		if args[colNext], err = jsonText(cp.Next); err != nil {
			return nil, err
		}
	}
	if len(cp.Pending) > 0 {
		pending := make([]pendingJSON, len(cp.Pending))
		for i, p := range cp.Pending {
			pending[i] = pendingJSON{Node: p.Node, Update: p.Update}
		}
		if args[colPending], err = jsonText(pending); err != nil {
			return nil, err
		}
	}
	if len(cp.Counters) > 0 {
		if args[colCounters], err = jsonText(cp.Counters); err != nil {
			return nil, err
		}
	}
	if len(cp.Interrupts) > 0 {
		interrupts := make([]interruptJSON, len(cp.Interrupts))
		for i, p := range cp.Interrupts {
			interrupts[i] = interruptJSON{ID: p.ID, Node: p.Node, When: p.When, Payload: p.Payload}
		}
		if args[colInterrupts], err = jsonText(interrupts); err != nil {
			return nil, err
		}
	}
	if len(cp.Resumes) > 0 {
		if args[colResumes], err = jsonText(cp.Resumes); err != nil {
			return nil, err
		}
	}
	return args, nil
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// decodeRow builds a checkpoint from a row scanned into vals, checking the
// type of every column. thread is the thread the row was read for. A row
// that does not decode gives an error wrapping statgraph.ErrCorruptCheckpoint
// that names the file, the thread and the checkpoint id.
func (s *Store) decodeRow(thread string, vals *[numColumns]any) (*statgraph.Checkpoint, error) {
	id, ok := vals[colID].(int64)
	if !ok {
		return nil, fmt.Errorf("%w: thread %q in %s: a row's id column holds %s, want an integer; delete the thread or restore the file from a backup",
			statgraph.ErrCorruptCheckpoint, thread, s.path, describe(vals[colID]))
	}
	d := rowDecoder{vals: vals}
	cp := &statgraph.Checkpoint{ID: id}
	cp.Thread = d.text(colThread)
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
	d.json(colNext, &cp.Next)
	var pending []pendingJSON
	if d.json(colPending, &pending) {
		cp.Pending = make([]statgraph.PendingWrite, len(pending))
		for i, p := range pending {
			cp.Pending[i] = statgraph.PendingWrite{Node: p.Node, Update: p.Update}
		}
	}
	d.json(colCounters, &cp.Counters)
	var interrupts []interruptJSON
	if d.json(colInterrupts, &interrupts) {
		cp.Interrupts = make([]statgraph.PendingInterrupt, len(interrupts))
		for i, p := range interrupts {
			cp.Interrupts[i] = statgraph.PendingInterrupt{ID: p.ID, Node: p.Node, When: p.When, Payload: p.Payload}
		}
	}
	d.json(colResumes, &cp.Resumes)
	if d.err != nil {
		return nil, fmt.Errorf("%w: thread %q checkpoint %d in %s: %w; delete the thread or restore the file from a backup",
			statgraph.ErrCorruptCheckpoint, thread, id, s.path, d.err)
	}
	return cp, nil
}

// columnNames are the names of the columns, by index, for error messages.
var columnNames = [numColumns]string{
	"thread", "id", "parent", "step", "source", "created", "delta",
	"state", "next", "pending", "counters", "interrupts", "resumes", "extra",
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

// json decodes a JSON column into target and reports whether it held a
// value; NULL leaves target untouched.
func (d *rowDecoder) json(col int, target any) bool {
	var data []byte
	switch v := d.vals[col].(type) {
	case nil:
		return false
	case string:
		data = []byte(v)
	case []byte:
		data = v
	default:
		d.fail(col, fmt.Errorf("holds %s, want JSON text", describe(v)))
		return false
	}
	if err := json.Unmarshal(data, target); err != nil {
		d.fail(col, fmt.Errorf("holds invalid JSON: %w", err))
		return false
	}
	return true
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
