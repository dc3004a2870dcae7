package sqlite

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/statgraph/statgraph/statgraph"
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
	if len(cp.Next) > 0 {
		args[colNext] = nextJSON(cp.Next)
	}
	if len(cp.Counters) > 0 {
		args[colCounters] = countersJSON(cp.Counters)
	}
	var err error
	if len(cp.Pending) > 0 {
		pending := make([]pendingJSON, len(cp.Pending))
		for i, p := range cp.Pending {
			pending[i] = pendingJSON{Node: p.Node, Update: p.Update}
		}
		if args[colPending], err = jsonText(pending); err != nil {
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

// nextJSON and countersJSON encode the two JSON columns every checkpoint
// has without encoding/json's reflection; Put is on the engine's path once
// per super-step.
func nextJSON(next []string) string {
	b := make([]byte, 0, 64)
	b = append(b, '[')
	for i, n := range next {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, n)
	}
	return string(append(b, ']'))
}

func countersJSON(counters map[string]int) string {
	b := make([]byte, 0, 64)
	b = append(b, '{')
	for name, n := range counters {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = appendJSONString(b, name)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return string(append(b, '}'))
}

// appendJSONString appends s as a JSON string. Bytes that are not valid
// UTF-8 are copied as they are; encoding/json decodes them as U+FFFD, as it
// would have encoded them.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
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
	key, _ := vals[colKey].(int64) // an INTEGER PRIMARY KEY is always an integer
	id := key & maxID
	d := rowDecoder{vals: vals}
	cp := &statgraph.Checkpoint{Thread: thread, ID: id}
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
