package statgraph

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A fast decoder for JSONCodec: states are read back far more often than
// any other JSON (State, History, every resume), and encoding/json spends
// most of a load on reflection and one allocation per string. decodeState
// and decodeField read the common shapes (an object whose keys are the
// field names exactly, with strings, numbers, booleans and slices of them)
// directly, and give up (ok false) on anything else, after which the
// caller runs encoding/json on the whole input: so the result and the
// errors are always those of encoding/json, only faster for the shapes it
// knows.

// decodeKind says how decodeField reads a field's value.
type decodeKind uint8

const (
	decodeJSON   decodeKind = iota // through encoding/json
	decodeString                   // a string kind
	decodeBool                     // a bool kind
	decodeInt                      // a signed integer kind
	decodeUint                     // an unsigned integer kind
	decodeFloat                    // a float kind
	decodeSlice                    // a slice whose elements are one of the kinds above, but not bytes
)

// fieldDecoder is how one field, or the elements of a slice field, decode.
type fieldDecoder struct {
	kind decodeKind
	elem decodeKind // for decodeSlice: the elements' kind
	bits int        // for numbers: the size of the kind
}

// scalarDecodeKind is the decodeKind of a value of type t, decodeJSON when
// it is not a plain scalar.
func scalarDecodeKind(t reflect.Type) (decodeKind, int) {
	if hasCustomJSON(t) {
		return decodeJSON, 0
	}
	switch k := t.Kind(); {
	case k == reflect.String:
		return decodeString, 0
	case k == reflect.Bool:
		return decodeBool, 0
	case k >= reflect.Int && k <= reflect.Int64:
		return decodeInt, t.Bits()
	case k >= reflect.Uint && k <= reflect.Uintptr:
		return decodeUint, t.Bits()
	case k == reflect.Float32 || k == reflect.Float64:
		return decodeFloat, t.Bits()
	}
	return decodeJSON, 0
}

// planDecode fills in the full-state decoder of p: the JSON name of each
// field and how its value decodes. It leaves p.decodable false when
// encoding/json would read the type in a way this decoder does not mirror
// (a tag with the string option, an unusual or duplicated name).
func (p *deltaPlan) planDecode() {
	p.byJSON = make(map[string]int, len(p.fields))
	for i := range p.fields {
		f := &p.fields[i]
		sf := p.typ.Field(f.index)
		name, opts, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if strings.Contains(","+opts+",", ",string,") {
			return
		}
		if name == "" {
			name = sf.Name
		}
		for _, c := range name {
			if c != '_' && (c < '0' || c > '9') && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
				return // encoding/json's rules for odd names are not mirrored
			}
		}
		if _, dup := p.byJSON[name]; dup {
			return
		}
		p.byJSON[name] = i
		f.dec.kind, f.dec.bits = scalarDecodeKind(f.typ)
		if f.typ.Kind() == reflect.Slice && !hasCustomJSON(f.typ) {
			if k, bits := scalarDecodeKind(f.typ.Elem()); k != decodeJSON && f.typ.Elem().Kind() != reflect.Uint8 {
				f.dec = fieldDecoder{kind: decodeSlice, elem: k, bits: bits}
			}
		}
	}
	p.decodable = true
}

// decodeState decodes data, a JSON object, into the struct v as
// json.Unmarshal would. ok is false when data is not of a shape it knows
// (or not valid); v is then partly set and the caller must decode again
// with encoding/json into a fresh value.
func (p *deltaPlan) decodeState(data []byte, v reflect.Value) bool {
	if !p.decodable {
		return false
	}
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return skipSpace(data, i+1) == len(data)
	}
	for {
		key, j, ok := scanKey(data, i)
		if !ok {
			return false
		}
		k, known := p.byJSON[string(key)]
		if !known {
			return false // unknown or case-folded key: encoding/json decides
		}
		if j = skipSpace(data, j); j >= len(data) || data[j] != ':' {
			return false
		}
		f := &p.fields[k]
		end, ok := f.dec.decode(data, skipSpace(data, j+1), v.Field(f.index))
		if !ok {
			return false
		}
		if i = skipSpace(data, end); i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return skipSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
}

// decodeField decodes data, one JSON value, into v (a field of type f.typ
// or a pointer to one) as json.Unmarshal would; ok is false when it cannot
// tell, and the caller then uses encoding/json.
func (f *deltaField) decodeField(data []byte, v reflect.Value) bool {
	end, ok := f.dec.decode(data, skipSpace(data, 0), v)
	return ok && skipSpace(data, end) == len(data)
}

// decode reads the value at data[i] into v and returns the index after it.
func (d fieldDecoder) decode(data []byte, i int, v reflect.Value) (int, bool) {
	if i >= len(data) {
		return 0, false
	}
	if end, ok := literal(data, i, "null"); ok {
		// null leaves a scalar as it is and sets a slice to nil; other
		// kinds are left to encoding/json.
		switch d.kind {
		case decodeJSON:
		case decodeSlice:
			v.SetZero()
			return end, true
		default:
			return end, true
		}
	}
	switch d.kind {
	case decodeSlice:
		return d.decodeSlice(data, i, v)
	case decodeJSON:
		end, ok := skipJSON(data, i)
		if !ok || json.Unmarshal(data[i:end], v.Addr().Interface()) != nil {
			return 0, false
		}
		return end, true
	}
	return decodeScalar(d.kind, d.bits, data, i, v, "", 0)
}

// decodeScalar reads the string, boolean or number at data[i] into v. A
// string without escapes is sliced from block, which holds the JSON text
// of data from offset at, instead of being copied (block "": copied).
func decodeScalar(kind decodeKind, bits int, data []byte, i int, v reflect.Value, block string, at int) (int, bool) {
	switch kind {
	case decodeString:
		s, end, ok := scanString(data, i, block, at)
		if ok {
			v.SetString(s)
		}
		return end, ok
	case decodeBool:
		if end, ok := literal(data, i, "true"); ok {
			v.SetBool(true)
			return end, true
		}
		end, ok := literal(data, i, "false")
		if ok {
			v.SetBool(false)
		}
		return end, ok
	case decodeInt, decodeUint:
		neg, u, end, ok := scanInteger(data, i)
		if !ok {
			return 0, false
		}
		if kind == decodeUint {
			if neg && u != 0 || bits < 64 && u >= 1<<bits {
				return 0, false
			}
			v.SetUint(u)
			return end, true
		}
		limit := uint64(1) << (bits - 1) // |min| of the kind
		if !neg && u >= limit || neg && u > limit {
			return 0, false
		}
		n := int64(u)
		if neg {
			n = -n
		}
		v.SetInt(n)
		return end, true
	case decodeFloat:
		end, ok := scanNumber(data, i)
		if !ok {
			return 0, false
		}
		x, err := strconv.ParseFloat(string(data[i:end]), bits)
		if err != nil {
			return 0, false
		}
		v.SetFloat(x)
		return end, true
	}
	return 0, false
}

// decodeSlice reads the array at data[i] into v, a slice of scalars. The
// strings of the elements share one copy of the array's text.
func (d fieldDecoder) decodeSlice(data []byte, i int, v reflect.Value) (int, bool) {
	if data[i] != '[' {
		return 0, false
	}
	// Count the elements first (and find the end) so that the slice is
	// made once at its size.
	end, n, ok := scanArray(data, i)
	if !ok {
		return 0, false
	}
	var block string
	if d.elem == decodeString {
		block = string(data[i:end]) // one allocation for every element's text
	}
	// The common case, []string, is made and set without reflection.
	var out reflect.Value
	var strs []string
	if p, ok := v.Addr().Interface().(*[]string); ok {
		strs = make([]string, n)
		*p = strs
	} else {
		out = reflect.MakeSlice(v.Type(), n, n)
	}
	j := skipSpace(data, i+1)
	for k := range n {
		if strs != nil {
			strs[k], j, ok = scanString(data, j, block, i)
		} else {
			j, ok = decodeScalar(d.elem, d.bits, data, j, out.Index(k), block, i)
		}
		if !ok {
			return 0, false
		}
		// Each element ends where scanArray found its end.
		if j = skipSpace(data, j); j >= len(data) || k < n-1 && data[j] != ',' || k == n-1 && j != end-1 {
			return 0, false
		}
		j = skipSpace(data, j+1)
	}
	if strs == nil {
		v.Set(out)
	}
	return end, true
}

// literal reports whether data[i:] starts with word, and the index after.
func literal(data []byte, i int, word string) (int, bool) {
	if len(data)-i < len(word) || string(data[i:i+len(word)]) != word {
		return 0, false
	}
	return i + len(word), true
}

// scanString reads the JSON string at data[i]: a string without escapes,
// control characters or invalid UTF-8 is sliced from block (see
// decodeScalar) or copied; one with escapes is decoded by encoding/json.
// ok is false for anything else.
func scanString(data []byte, i int, block string, at int) (s string, end int, ok bool) {
	if i >= len(data) || data[i] != '"' {
		return "", 0, false
	}
	ascii := true
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			if !ascii && !utf8.Valid(data[i+1:j]) {
				return "", 0, false // encoding/json replaces invalid bytes
			}
			if block != "" {
				return block[i+1-at : j-at], j + 1, true
			}
			return string(data[i+1 : j]), j + 1, true
		case c == '\\':
			return unescapeString(data, i)
		case c < 0x20:
			return "", 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", 0, false
}

// unescapeString decodes the JSON string with escapes at data[i] with
// encoding/json (apart from scanString, whose result then need not live on
// the heap).
func unescapeString(data []byte, i int) (s string, end int, ok bool) {
	end, ok = skipJSON(data, i)
	if !ok || json.Unmarshal(data[i:end], &s) != nil {
		return "", 0, false
	}
	return s, end, true
}

// scanInteger reads the JSON number at data[i] when it is an integer (no
// fraction or exponent, as encoding/json requires for integer kinds) whose
// magnitude fits in a uint64.
func scanInteger(data []byte, i int) (neg bool, u uint64, end int, ok bool) {
	end, ok = scanNumber(data, i)
	if !ok {
		return false, 0, 0, false
	}
	j := i
	if data[j] == '-' {
		neg, j = true, j+1
	}
	for ; j < end; j++ {
		c := data[j]
		if c < '0' || c > '9' {
			return false, 0, 0, false // a fraction or an exponent
		}
		if u > (math.MaxUint64-9)/10 {
			return false, 0, 0, false // too large: encoding/json decides
		}
		u = u*10 + uint64(c-'0')
	}
	return neg, u, end, true
}

// scanNumber returns the end of the JSON number at data[i]; ok is false
// when there is none.
func scanNumber(data []byte, i int) (int, bool) {
	digits := func(j int) int {
		for j < len(data) && data[j] >= '0' && data[j] <= '9' {
			j++
		}
		return j
	}
	j := i
	if j < len(data) && data[j] == '-' {
		j++
	}
	switch {
	case j < len(data) && data[j] == '0':
		j++
	case j < len(data) && data[j] >= '1' && data[j] <= '9':
		j = digits(j)
	default:
		return 0, false
	}
	if j < len(data) && data[j] == '.' {
		k := digits(j + 1)
		if k == j+1 {
			return 0, false
		}
		j = k
	}
	if j < len(data) && (data[j] == 'e' || data[j] == 'E') {
		j++
		if j < len(data) && (data[j] == '+' || data[j] == '-') {
			j++
		}
		k := digits(j)
		if k == j {
			return 0, false
		}
		j = k
	}
	return j, true
}

// scanArray returns the end of the array at data[i] and how many elements
// it has; ok is false when it is not well formed as far as scanArray
// looks (element values are checked when they are decoded).
func scanArray(data []byte, i int) (end, n int, ok bool) {
	j := skipSpace(data, i+1)
	if j < len(data) && data[j] == ']' {
		return j + 1, 0, true
	}
	for {
		if j, ok = skipJSON(data, j); !ok {
			return 0, 0, false
		}
		n++
		if j = skipSpace(data, j); j >= len(data) {
			return 0, 0, false
		}
		switch data[j] {
		case ',':
			j = skipSpace(data, j+1)
		case ']':
			return j + 1, n, true
		default:
			return 0, 0, false
		}
	}
}

// skipJSON returns the index after the JSON value starting at data[i],
// staying within data whatever it holds; it checks only that strings and
// brackets close, so what it skips must still be validated by whoever
// decodes it.
func skipJSON(data []byte, i int) (int, bool) {
	depth := 0
	for ; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
			if i >= len(data) {
				return 0, false
			}
			if depth == 0 {
				return i + 1, true
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i, true // the end of a literal before a closing bracket
			}
			if depth--; depth == 0 {
				return i + 1, true
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i, true
			}
		}
	}
	return i, depth == 0
}

// decodeFast decodes data into a new S with p's decoder; ok is false when
// it cannot (p nil, or data not of a shape it reads), and the caller then
// uses encoding/json.
func decodeFast[S any](p *deltaPlan, data []byte) (S, bool) {
	var s S
	if p == nil || !p.decodable {
		return s, false
	}
	v := reflect.ValueOf(&s).Elem()
	if p.ptr {
		nv := reflect.New(p.typ)
		v.Set(nv)
		v = nv.Elem()
	}
	if !p.decodeState(data, v) {
		var zero S
		return zero, false
	}
	return s, true
}

// unmarshal decodes raw into the new value v points to (from
// reflect.New(f.typ)), as json.Unmarshal(raw, v.Interface()) does.
func (f *deltaField) unmarshal(raw []byte, v reflect.Value) error {
	if f.dec.kind != decodeJSON && f.decodeField(raw, v.Elem()) {
		return nil
	}
	v.Elem().SetZero()
	return json.Unmarshal(raw, v.Interface())
}

// check reports whether raw, the value of a scalar field, decodes (as
// decodeField would, without keeping the value: a string is not copied).
// false means it cannot tell cheaply, not that raw is invalid.
func (f *deltaField) check(raw []byte) bool {
	i := skipSpace(raw, 0)
	end, ok := literal(raw, i, "null")
	switch {
	case ok:
	case f.dec.kind == decodeString:
		end, ok = checkString(raw, i)
	case f.dec.kind == decodeBool:
		if end, ok = literal(raw, i, "true"); !ok {
			end, ok = literal(raw, i, "false")
		}
	case f.dec.kind == decodeInt || f.dec.kind == decodeUint:
		var u uint64
		var neg bool
		neg, u, end, ok = scanInteger(raw, i)
		limit := uint64(1) << (f.dec.bits - 1)
		if f.dec.kind == decodeUint {
			ok = ok && (!neg || u == 0) && (f.dec.bits == 64 || u < 1<<f.dec.bits)
		} else {
			ok = ok && (!neg && u < limit || neg && u <= limit)
		}
	}
	return ok && skipSpace(raw, end) == len(raw)
}

// checkString reports whether the JSON string at data[i] is one scanString
// reads without encoding/json, and returns its end.
func checkString(data []byte, i int) (int, bool) {
	if i >= len(data) || data[i] != '"' {
		return 0, false
	}
	ascii := true
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return j + 1, ascii || utf8.Valid(data[i+1:j])
		case c == '\\' || c < 0x20:
			return 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return 0, false
}
