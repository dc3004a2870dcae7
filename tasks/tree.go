package tasks

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// tree.go holds an order-preserving JSON tree with byte offsets. encoding/json
// is not used for the document itself because write-back must keep unknown
// fields, key order and the exact spelling of every untouched value (an id
// written as 3 stays 3, "3" stays "3"), and validation must point at the
// byte where each value starts. Decoder.Token could give offsets too, but a
// hand-written scanner is several times faster on large files and lets the
// syntax errors say what was expected.

// kind is the JSON type of a node.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// String names the kind the way error messages show it.
func (k kind) String() string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "boolean"
	case kindNumber:
		return "number"
	case kindString:
		return "string"
	case kindArray:
		return "array"
	default:
		return "object"
	}
}

// node is one JSON value. Scalars keep their raw text so that write-back
// reproduces them exactly; composites keep their children in source order.
type node struct {
	kind    kind
	off     int      // byte offset of the value's first byte in the source (after any BOM)
	raw     []byte   // the scalar's JSON text; nil for arrays and objects
	str     string   // the decoded value when kind is kindString
	elems   []*node  // array elements
	members []member // object members in source order
}

// member is one key/value pair of an object.
type member struct {
	key    string
	keyRaw []byte // the key's JSON text including quotes
	keyOff int
	val    *node
}

// get returns the value of the first member named key, or nil.
func (n *node) get(key string) *node {
	if n == nil || n.kind != kindObject {
		return nil
	}
	for i := range n.members {
		if n.members[i].key == key {
			return n.members[i].val
		}
	}
	return nil
}

// set replaces the value of member key, or appends the member when absent.
func (n *node) set(key string, val *node) {
	for i := range n.members {
		if n.members[i].key == key {
			val.off = n.members[i].val.off
			n.members[i].val = val
			return
		}
	}
	n.members = append(n.members, member{key: key, keyRaw: marshalString(key), keyOff: -1, val: val})
}

// remove deletes every member named key.
func (n *node) remove(key string) {
	kept := n.members[:0]
	for _, m := range n.members {
		if m.key != key {
			kept = append(kept, m)
		}
	}
	n.members = kept
}

// maxDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxDepth = 1000

// syntaxError is a JSON syntax problem at a byte offset.
type syntaxError struct {
	off int
	msg string
	// ids holds, outermost first, the "id" members already read of the
	// objects that were open at the error, so the problem can name the
	// task it is in.
	ids []string
}

// parser is a recursive-descent JSON parser over a byte slice.
type parser struct {
	data  []byte
	pos   int
	depth int
	err   *syntaxError
	ids   []string // per open object: its "id" member's value, once read

	// Allocation batching, which halves the time spent on large files:
	// nodes come from slabs, and children collect on shared stacks before
	// being copied into a slice of the exact size.
	slab    []node
	members []member
	elems   []*node
}

// newNode returns a zeroed node from the current slab.
func (p *parser) newNode(k kind, off int) *node {
	if len(p.slab) == 0 {
		p.slab = make([]node, 512)
	}
	n := &p.slab[0]
	p.slab = p.slab[1:]
	n.kind, n.off = k, off
	return n
}

// parseTree parses data as one JSON value followed only by whitespace.
func parseTree(data []byte) (*node, *syntaxError) {
	p := &parser{data: data}
	p.skipSpace()
	if p.pos == len(data) {
		return nil, &syntaxError{off: 0, msg: `the file is empty; want {"tasks": [...]}`}
	}
	root := p.value()
	if p.err != nil {
		return nil, p.err
	}
	p.skipSpace()
	if p.pos < len(data) {
		return nil, &syntaxError{off: p.pos, msg: fmt.Sprintf("unexpected %s after the end of the top-level JSON value", p.describe())}
	}
	return root, nil
}

func (p *parser) fail(off int, format string, args ...any) *node {
	if p.err == nil {
		var ids []string
		for _, id := range p.ids {
			if id != "" {
				ids = append(ids, id)
			}
		}
		p.err = &syntaxError{off, fmt.Sprintf(format, args...), ids}
	}
	return nil
}

// describe names the byte at the current position for error messages.
func (p *parser) describe() string {
	if p.pos >= len(p.data) {
		return "end of file"
	}
	r, _ := utf8.DecodeRune(p.data[p.pos:])
	if r == utf8.RuneError || r < 0x20 {
		return fmt.Sprintf("byte 0x%02x", p.data[p.pos])
	}
	return fmt.Sprintf("character %q", r)
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() *node {
	if p.pos >= len(p.data) {
		return p.fail(p.pos, "unexpected end of file, expecting a value")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.string()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return p.literal("true", kindBool)
	case c == 'f':
		return p.literal("false", kindBool)
	case c == 'n':
		return p.literal("null", kindNull)
	default:
		return p.fail(p.pos, "unexpected %s, expecting a value", p.describe())
	}
}

func (p *parser) literal(word string, k kind) *node {
	start := p.pos
	end := start + len(word)
	if end > len(p.data) || string(p.data[start:end]) != word {
		return p.fail(start, "unexpected %s, expecting a value", p.describe())
	}
	p.pos = end
	n := p.newNode(k, start)
	n.raw = p.data[start:end]
	return n
}

func (p *parser) number() *node {
	start := p.pos
	d := p.data
	if p.pos < len(d) && d[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(d) && d[p.pos] == '0':
		p.pos++
	case p.pos < len(d) && d[p.pos] >= '1' && d[p.pos] <= '9':
		p.digits()
	default:
		return p.fail(p.pos, "invalid number: expecting a digit, found %s", p.describe())
	}
	if p.pos < len(d) && d[p.pos] == '.' {
		p.pos++
		if !p.digits() {
			return p.fail(p.pos, "invalid number: expecting a digit after the decimal point, found %s", p.describe())
		}
	}
	if p.pos < len(d) && (d[p.pos] == 'e' || d[p.pos] == 'E') {
		p.pos++
		if p.pos < len(d) && (d[p.pos] == '+' || d[p.pos] == '-') {
			p.pos++
		}
		if !p.digits() {
			return p.fail(p.pos, "invalid number: expecting a digit in the exponent, found %s", p.describe())
		}
	}
	n := p.newNode(kindNumber, start)
	n.raw = d[start:p.pos]
	return n
}

// digits consumes a run of decimal digits and reports whether there was one.
func (p *parser) digits() bool {
	start := p.pos
	for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
		p.pos++
	}
	return p.pos > start
}

func (p *parser) string() *node {
	start := p.pos
	raw, str, ok := p.scanString()
	if !ok {
		return nil
	}
	n := p.newNode(kindString, start)
	n.raw, n.str = raw, str
	return n
}

// scanString reads the string at p.pos and returns its JSON text and its
// decoded value; ok is false after a syntax error.
func (p *parser) scanString() (raw []byte, str string, ok bool) {
	start := p.pos
	p.pos++ // opening quote
	escaped := false
	for {
		if p.pos >= len(p.data) {
			p.fail(start, "string starting here is not closed before the end of file")
			return nil, "", false
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			raw = p.data[start:p.pos]
			if !escaped {
				return raw, string(raw[1 : len(raw)-1]), true
			}
			if err := json.Unmarshal(raw, &str); err != nil {
				p.fail(start, "invalid string: %v", err)
				return nil, "", false
			}
			return raw, str, true
		case c == '\\':
			escaped = true
			if p.pos+1 >= len(p.data) {
				p.fail(start, "string starting here is not closed before the end of file")
				return nil, "", false
			}
			switch e := p.data[p.pos+1]; e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				p.pos += 2
			case 'u':
				if p.pos+6 > len(p.data) || !isHex4(p.data[p.pos+2:p.pos+6]) {
					p.fail(p.pos, `invalid escape: \u must be followed by four hex digits`)
					return nil, "", false
				}
				p.pos += 6
			default:
				p.fail(p.pos, "invalid escape %q in string", "\\"+string(rune(e)))
				return nil, "", false
			}
		case c < 0x20:
			if c == '\n' {
				p.fail(start, "string starting here is not closed on its line (a raw newline is not allowed in a JSON string)")
			} else {
				p.fail(p.pos, "control byte 0x%02x inside a string; escape it", c)
			}
			return nil, "", false
		default:
			p.pos++
		}
	}
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func (p *parser) enter() bool {
	p.depth++
	if p.depth > maxDepth {
		p.fail(p.pos, "JSON nested more than %d levels deep", maxDepth)
		return false
	}
	return true
}

func (p *parser) object() *node {
	n := p.newNode(kindObject, p.pos)
	if !p.enter() {
		return nil
	}
	defer func() { p.depth-- }()
	p.ids = append(p.ids, "")
	defer func() { p.ids = p.ids[:len(p.ids)-1] }()
	p.pos++ // {
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return n
	}
	base := len(p.members)
	defer func() { p.members = p.members[:base] }()
	for {
		p.skipSpace()
		if p.pos >= len(p.data) {
			return p.fail(n.off, "object starting here is not closed before the end of file")
		}
		if p.data[p.pos] != '"' {
			if p.data[p.pos] == '}' && len(p.members) > base {
				return p.fail(p.pos, "trailing comma before '}': remove the comma after the last member")
			}
			return p.fail(p.pos, "unexpected %s, expecting a quoted member name", p.describe())
		}
		keyOff := p.pos
		keyRaw, key, ok := p.scanString()
		if !ok {
			return nil
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return p.fail(p.pos, "unexpected %s after member name %s, expecting ':'", p.describe(), keyRaw)
		}
		p.pos++
		p.skipSpace()
		v := p.value()
		if v == nil {
			return nil
		}
		p.members = append(p.members, member{key: key, keyRaw: keyRaw, keyOff: keyOff, val: v})
		if key == "id" && (v.kind == kindString || v.kind == kindNumber) {
			p.ids[len(p.ids)-1] = string(v.raw)
			if v.kind == kindString {
				p.ids[len(p.ids)-1] = v.str
			}
		}
		p.skipSpace()
		if p.pos >= len(p.data) {
			return p.fail(n.off, "object starting here is not closed before the end of file")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			n.members = append([]member(nil), p.members[base:]...)
			return n
		default:
			return p.fail(p.pos, "unexpected %s after object member %s, expecting ',' or '}'", p.describe(), keyRaw)
		}
	}
}

func (p *parser) array() *node {
	n := p.newNode(kindArray, p.pos)
	if !p.enter() {
		return nil
	}
	defer func() { p.depth-- }()
	p.pos++ // [
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return n
	}
	base := len(p.elems)
	defer func() { p.elems = p.elems[:base] }()
	for {
		p.skipSpace()
		if p.pos < len(p.data) && p.data[p.pos] == ']' && len(p.elems) > base {
			return p.fail(p.pos, "trailing comma before ']': remove the comma after the last element")
		}
		v := p.value()
		if v == nil {
			return nil
		}
		p.elems = append(p.elems, v)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return p.fail(n.off, "array starting here is not closed before the end of file")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			n.elems = append([]*node(nil), p.elems[base:]...)
			return n
		default:
			return p.fail(p.pos, "unexpected %s after array element, expecting ',' or ']'", p.describe())
		}
	}
}
