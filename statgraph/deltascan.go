package statgraph

import "encoding/json"

// deltaEntry is one known field of a delta: its value set in full, or the
// elements appended to it (a JSON array). raw may alias the delta.
type deltaEntry struct {
	f         *deltaField
	appending bool
	raw       []byte
}

// entries returns the entries of delta for the fields the type has, set
// entries before append entries, appended to buf; fields the type does not
// have are left out, as encoding/json ignores them. A delta as
// MarshalDelta writes it is walked in place without allocating; any other
// valid delta (other key order, escaped or repeated keys, null parts) is
// decoded through deltaDoc as before, so both give the same entries. An
// invalid delta gives the error of encoding/json.
func (p *deltaPlan) entries(delta []byte, buf []deltaEntry) ([]deltaEntry, error) {
	if json.Valid(delta) {
		if out, ok := p.scanDelta(delta, buf); ok {
			return out, nil
		}
	}
	var d deltaDoc
	if err := json.Unmarshal(delta, &d); err != nil {
		return nil, err
	}
	for name, raw := range d.Set {
		if f := p.field(name); f != nil {
			buf = append(buf, deltaEntry{f: f, raw: raw})
		}
	}
	for name, raw := range d.Append {
		if f := p.field(name); f != nil {
			buf = append(buf, deltaEntry{f: f, appending: true, raw: raw})
		}
	}
	return buf, nil
}

// scanDelta walks delta, which must be valid JSON, when it has the form
// MarshalDelta writes: an object with an "s" part then an "a" part, each
// optional and an object, keys without escapes, no field twice in a part.
// ok is false for anything else.
func (p *deltaPlan) scanDelta(d []byte, buf []deltaEntry) (out []deltaEntry, ok bool) {
	if len(p.fields) > 64 {
		return nil, false
	}
	i := skipSpace(d, 0)
	if i >= len(d) || d[i] != '{' {
		return nil, false
	}
	i = skipSpace(d, i+1)
	if d[i] == '}' {
		return buf, true
	}
	last := -1 // the last part seen: 0 set, 1 append
	for {
		key, j, ok := scanKey(d, i)
		if !ok {
			return nil, false
		}
		part := -1
		switch string(key) {
		case "s":
			part = 0
		case "a":
			part = 1
		}
		if part <= last {
			return nil, false
		}
		last = part
		i = skipSpace(d, skipSpace(d, j)+1) // past ':'
		if d[i] != '{' {
			return nil, false
		}
		var seen uint64
		i = skipSpace(d, i+1)
		for d[i] != '}' {
			name, j, ok := scanKey(d, i)
			if !ok {
				return nil, false
			}
			i = skipSpace(d, skipSpace(d, j)+1) // past ':'
			end := skipValue(d, i)
			if k, known := p.byName[string(name)]; known {
				if seen&(1<<k) != 0 {
					return nil, false
				}
				seen |= 1 << k
				buf = append(buf, deltaEntry{f: &p.fields[k], appending: part == 1, raw: d[i:end]})
			}
			if i = skipSpace(d, end); d[i] == ',' {
				i = skipSpace(d, i+1)
			}
		}
		if i = skipSpace(d, i+1); d[i] == ',' {
			i = skipSpace(d, i+1)
			continue
		}
		return buf, true
	}
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r') {
		i++
	}
	return i
}

// scanKey returns the text of the string starting at d[i] and the index
// after its closing quote; ok is false when it is not a string or holds an
// escape.
func scanKey(d []byte, i int) (key []byte, next int, ok bool) {
	if i >= len(d) || d[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(d); j++ {
		switch d[j] {
		case '"':
			return d[i+1 : j], j + 1, true
		case '\\':
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// skipValue returns the index just after the valid JSON value starting at
// d[i].
func skipValue(d []byte, i int) int {
	depth := 0
	for ; i < len(d); i++ {
		switch c := d[i]; c {
		case '"':
			for i++; d[i] != '"'; i++ {
				if d[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of a literal before a closing bracket
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}
