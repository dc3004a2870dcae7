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
// MarshalDelta writes it is walked and checked in place in one pass,
// without allocating; any other delta (other key order, escaped or
// repeated keys, null parts, invalid JSON) is decoded through deltaDoc as
// before, so both give the same entries, and an invalid delta the error of
// encoding/json.
func (p *deltaPlan) entries(delta []byte, buf []deltaEntry) ([]deltaEntry, error) {
	if out, ok := p.scanDelta(delta, buf); ok {
		return out, nil
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

// scanDelta walks delta when it has the form MarshalDelta writes: an object
// with an "s" part then an "a" part, each optional and an object, keys
// without escapes, no field twice in a part. It checks every byte as
// json.Valid would (the values of unknown fields too, since encoding/json
// rejects the whole document for them); ok is false for anything else,
// invalid JSON included.
func (p *deltaPlan) scanDelta(d []byte, buf []deltaEntry) (out []deltaEntry, ok bool) {
	if len(p.fields) > 64 {
		return nil, false
	}
	i := skipSpace(d, 0)
	if !at(d, i, '{') {
		return nil, false
	}
	last := -1 // the last part seen: 0 set, 1 append
	for i = skipSpace(d, i+1); !at(d, i, '}'); {
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
		if i = skipSpace(d, j); !at(d, i, ':') {
			return nil, false
		}
		if i = skipSpace(d, i+1); !at(d, i, '{') {
			return nil, false
		}
		var seen uint64
		for i = skipSpace(d, i+1); !at(d, i, '}'); {
			name, j, ok := scanKey(d, i)
			if !ok {
				return nil, false
			}
			if i = skipSpace(d, j); !at(d, i, ':') {
				return nil, false
			}
			i = skipSpace(d, i+1)
			end, ok := validValue(d, i, 0)
			if !ok {
				return nil, false
			}
			if k, known := p.byName[string(name)]; known {
				if seen&(1<<k) != 0 {
					return nil, false
				}
				seen |= 1 << k
				buf = append(buf, deltaEntry{f: &p.fields[k], appending: part == 1, raw: d[i:end]})
			}
			if i = skipSpace(d, end); at(d, i, ',') {
				if i = skipSpace(d, i+1); at(d, i, '}') {
					return nil, false // a trailing comma
				}
			} else if !at(d, i, '}') {
				return nil, false
			}
		}
		if i = skipSpace(d, i+1); at(d, i, ',') {
			if i = skipSpace(d, i+1); at(d, i, '}') {
				return nil, false
			}
		} else if !at(d, i, '}') {
			return nil, false
		}
	}
	return buf, skipSpace(d, i+1) == len(d)
}

// at reports whether d[i] is c.
func at(d []byte, i int, c byte) bool { return i < len(d) && d[i] == c }

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
// escape or a control character.
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
		if d[j] < 0x20 { // not valid JSON
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// maxScanDepth is the nesting beyond which validValue gives up, leaving
// the value to encoding/json.
const maxScanDepth = 1000

// validValue checks the JSON value starting at d[i] as json.Valid would and
// returns the index just after it; ok is false when it is not valid (or
// nested deeper than maxScanDepth).
func validValue(d []byte, i, depth int) (end int, ok bool) {
	if i >= len(d) || depth > maxScanDepth {
		return 0, false
	}
	switch c := d[i]; {
	case c == '"':
		return validString(d, i)
	case c == '{':
		i = skipSpace(d, i+1)
		if at(d, i, '}') {
			return i + 1, true
		}
		for {
			if i, ok = validString(d, i); !ok {
				return 0, false
			}
			if i = skipSpace(d, i); !at(d, i, ':') {
				return 0, false
			}
			if i, ok = validValue(d, skipSpace(d, i+1), depth+1); !ok {
				return 0, false
			}
			switch i = skipSpace(d, i); {
			case at(d, i, ','):
				i = skipSpace(d, i+1)
			case at(d, i, '}'):
				return i + 1, true
			default:
				return 0, false
			}
		}
	case c == '[':
		i = skipSpace(d, i+1)
		if at(d, i, ']') {
			return i + 1, true
		}
		for {
			if i, ok = validValue(d, i, depth+1); !ok {
				return 0, false
			}
			switch i = skipSpace(d, i); {
			case at(d, i, ','):
				i = skipSpace(d, i+1)
			case at(d, i, ']'):
				return i + 1, true
			default:
				return 0, false
			}
		}
	case c == '-' || c >= '0' && c <= '9':
		return validNumber(d, i)
	}
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(d)-i >= len(lit) && string(d[i:i+len(lit)]) == lit {
			return i + len(lit), true
		}
	}
	return 0, false
}

// validString checks the JSON string starting at d[i] and returns the index
// after its closing quote. Like encoding/json it rejects control characters
// and unknown escapes but not invalid UTF-8.
func validString(d []byte, i int) (end int, ok bool) {
	if !at(d, i, '"') {
		return 0, false
	}
	for i++; i < len(d); i++ {
		switch c := d[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return 0, false
		case c == '\\':
			if i++; i >= len(d) {
				return 0, false
			}
			switch d[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(d)-i <= 4 {
					return 0, false
				}
				for _, h := range d[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return 0, false
					}
				}
				i += 4
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

// validNumber checks the JSON number starting at d[i] and returns the index
// after it.
func validNumber(d []byte, i int) (end int, ok bool) {
	digits := func(i int) int { // the index after a run of digits
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		return i
	}
	if at(d, i, '-') {
		i++
	}
	switch {
	case at(d, i, '0'):
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		i = digits(i)
	default:
		return 0, false
	}
	if at(d, i, '.') {
		j := digits(i + 1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if at(d, i, 'e') || at(d, i, 'E') {
		i++
		if at(d, i, '+') || at(d, i, '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}
