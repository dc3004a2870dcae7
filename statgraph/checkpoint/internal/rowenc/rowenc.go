// Package rowenc is the row encoding shared by the SQL checkpoint stores
// (checkpoint/sqlite, checkpoint/postgres): the collections of a
// statgraph.Checkpoint (its frontier, pending writes, counters, interrupts
// and resume values) as JSON text columns, so that a row reads the same in
// either database and both stores decode it with the same checks.
//
// An empty collection is encoded as "" and stored as NULL; a NULL column
// decodes to nil. Live values (Checkpoint.Value, PendingWrite.Value) are
// never encoded.
package rowenc

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/statgraph/statgraph/statgraph"
)

// Columns holds the JSON columns of one checkpoint row. "" stands for an
// empty collection, stored as NULL.
type Columns struct {
	Next, Pending, Counters, Interrupts, Resumes string
}

// pending is a statgraph.PendingWrite as stored in the pending column.
type pending struct {
	Node   string `json:"n"`
	Update []byte `json:"u,omitempty"`
}

// interrupt is a statgraph.Interruption as stored in the interrupts
// column.
type interrupt struct {
	ID      string `json:"i"`
	Node    string `json:"n"`
	When    string `json:"w"`
	Payload []byte `json:"p,omitempty"`
}

// Encode returns the JSON columns of cp. It fails only if encoding/json
// does, which it does not for these types; the error is kept for safety.
func Encode(cp *statgraph.Checkpoint) (Columns, error) {
	var c Columns
	if len(cp.Next) > 0 {
		c.Next = nextJSON(cp.Next)
	}
	if cp.Counters != nil { // empty is "every count 0"; nil is "the parent's, plus its Next"
		c.Counters = countersJSON(cp.Counters)
	}
	var err error
	if len(cp.Pending) > 0 {
		ps := make([]pending, len(cp.Pending))
		for i, p := range cp.Pending {
			ps[i] = pending{Node: p.Node, Update: p.Update}
		}
		if c.Pending, err = jsonText(ps); err != nil {
			return c, err
		}
	}
	if len(cp.Interrupts) > 0 {
		is := make([]interrupt, len(cp.Interrupts))
		for i, p := range cp.Interrupts {
			is[i] = interrupt{ID: p.ID, Node: p.Node, When: p.When, Payload: p.Payload}
		}
		if c.Interrupts, err = jsonText(is); err != nil {
			return c, err
		}
	}
	if len(cp.Resumes) > 0 {
		if c.Resumes, err = jsonText(cp.Resumes); err != nil {
			return c, err
		}
	}
	return c, nil
}

// Raw holds the JSON columns of one row as read; nil is NULL.
type Raw struct {
	Next, Pending, Counters, Interrupts, Resumes []byte
}

// Decode sets the collections of cp from the JSON columns of its row. A
// column that does not hold the JSON it should gives an error naming the
// column ("column pending holds invalid JSON: ..."); the caller adds the
// store, thread and id.
func Decode(cp *statgraph.Checkpoint, raw Raw) error {
	var d Decoder
	return d.Decode(cp, raw)
}

// Decoder decodes the rows of one read, as Decode does, more cheaply: it
// reads the next and counters columns (every row has the first, many the
// second) without encoding/json when they hold what Encode writes, and
// gives rows whose next column is the same text as the row before the same
// Next slice (checkpoints are immutable once read, so they may share it).
// The zero Decoder is ready to use; it is not safe for concurrent use.
type Decoder struct {
	lastNext []byte   // the next column of the last row with one
	next     []string // what it decoded to
	names    []string // node names seen in counters columns, reused as map keys
}

// Decode is Decode, for the next row of the read.
func (d *Decoder) Decode(cp *statgraph.Checkpoint, raw Raw) error {
	switch {
	case raw.Next == nil:
	case d.next != nil && string(raw.Next) == string(d.lastNext):
		cp.Next = d.next
	default:
		next, ok := scanNames(raw.Next)
		if !ok {
			var err error
			if next, err = decodeJSON[[]string]("next", raw.Next); err != nil {
				return err
			}
		}
		cp.Next, d.next, d.lastNext = next, next, append(d.lastNext[:0], raw.Next...)
	}
	if raw.Pending != nil {
		ps, err := decodeJSON[[]pending]("pending", raw.Pending)
		if err != nil {
			return err
		}
		if ps != nil {
			cp.Pending = make([]statgraph.PendingWrite, len(ps))
			for i, p := range ps {
				cp.Pending[i] = statgraph.PendingWrite{Node: p.Node, Update: p.Update}
			}
		}
	}
	if raw.Counters != nil {
		var ok bool
		if cp.Counters, ok = scanCounters(raw.Counters, d.intern); !ok {
			var err error
			if cp.Counters, err = decodeJSON[map[string]int]("counters", raw.Counters); err != nil {
				return err
			}
		}
	}
	if raw.Interrupts != nil {
		is, err := decodeJSON[[]interrupt]("interrupts", raw.Interrupts)
		if err != nil {
			return err
		}
		if is != nil {
			cp.Interrupts = make([]statgraph.Interruption, len(is))
			for i, p := range is {
				cp.Interrupts[i] = statgraph.Interruption{ID: p.ID, Node: p.Node, When: p.When, Payload: p.Payload}
			}
		}
	}
	if raw.Resumes != nil {
		var err error
		if cp.Resumes, err = decodeJSON[map[string][]byte]("resumes", raw.Resumes); err != nil {
			return err
		}
	}
	return nil
}

// intern returns name as a string, the same string as for an earlier row
// when one had it (a graph has few nodes: a short list is searched).
func (d *Decoder) intern(name []byte) string {
	for _, n := range d.names {
		if n == string(name) {
			return n
		}
	}
	s := string(name)
	if len(d.names) < 64 {
		d.names = append(d.names, s)
	}
	return s
}

// decodeJSON decodes the JSON column column with encoding/json.
func decodeJSON[T any](column string, data []byte) (T, error) {
	var v T
	err := unmarshal(column, data, &v)
	return v, err
}

// unmarshal decodes data into target unless data is nil (NULL).
func unmarshal(column string, data []byte, target any) error {
	if data == nil {
		return nil
	}
	if err := json.Unmarshal(data, target); err != nil {
		return fmt.Errorf("column %s holds invalid JSON: %w", column, err)
	}
	return nil
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

// appendJSONString appends s as a JSON string, writing bytes that are not
// valid UTF-8 as U+FFFD, as encoding/json does; the result is valid UTF-8,
// which a Postgres text column requires.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, s[start:i]...)
				b = append(b, `\ufffd`...)
				start = i + 1
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
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
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// EncodeWrites returns writes as stored in the pending column, a JSON
// array that AppendSQL appends to the column's array.
func EncodeWrites(writes []statgraph.PendingWrite) (string, error) {
	c, err := Encode(&statgraph.Checkpoint{Pending: writes})
	return c.Pending, err
}

// AppendSQL is the SQL expression (for SQLite and Postgres) of the pending
// column with the elements of the JSON array arg (as from EncodeWrites)
// appended: both are arrays as encoding/json writes them, so their texts
// join without parsing.
func AppendSQL(arg string) string {
	return "CASE WHEN pending IS NULL THEN " + arg + " ELSE substr(pending, 1, length(pending) - 1) || ',' || substr(" + arg + ", 2) END"
}
