package statgraph

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// A fast decoder for the default (JSON) codec: states are read back far more often than
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
