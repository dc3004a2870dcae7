package statgraph

import (
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
)

// newJSONCodec returns the default codec (see Codec).
func newJSONCodec[S any]() jsonCodec[S] {
	return jsonCodec[S]{plan: deltaPlanFor(reflect.TypeFor[S]())}
}

// jsonCodec is the default Codec, a deltaCodec. A delta lists, for each
// exported field that encoding/json would encode: nothing when the field is
// unchanged; only the new elements when a slice field grew by appending;
// the whole field otherwise. Fields are compared as values: scalars
// directly, slices by their backing array and length (O(1); when the array
// moved, the old elements are compared with reflect.DeepEqual, which
// appending makes rare), other fields with reflect.DeepEqual. The per-type
// analysis is done once and cached; the codec is safe for concurrent use.
type jsonCodec[S any] struct {
	plan *deltaPlan // nil when S has no delta encoding
}

func (jsonCodec[S]) Marshal(s S) ([]byte, error) { return json.Marshal(s) }

func (c jsonCodec[S]) Unmarshal(data []byte) (S, error) {
	if s, ok := decodeFast[S](c.plan, data); ok {
		return s, nil
	}
	var s S
	err := json.Unmarshal(data, &s)
	return s, err
}

// The delta is a JSON object {"s":{Field: value, ...}, "a":{Field: [new
// elements], ...}}, keyed by Go field name; either part is left out when
// empty, so an unchanged state encodes as {}.
const (
	deltaSet    = `"s":{`
	deltaAppend = `"a":{`
)

// deltaDoc is the decoded form of a delta.
type deltaDoc struct {
	Set    map[string]json.RawMessage `json:"s"`
	Append map[string]json.RawMessage `json:"a"`
}

func (c jsonCodec[S]) MarshalDelta(prev, cur S) ([]byte, bool, error) {
	p := c.plan
	if p == nil {
		return nil, false, nil
	}
	pv, cv := reflect.ValueOf(&prev).Elem(), reflect.ValueOf(&cur).Elem()
	if p.ptr {
		if pv.IsNil() || cv.IsNil() {
			return nil, false, nil
		}
		pv, cv = pv.Elem(), cv.Elem()
	}
	// First find what changed, then write the set and append parts into
	// one buffer.
	var opsBuf [16]deltaOp
	ops := opsBuf[:0]
	sets := 0
	for i := range p.fields {
		f := &p.fields[i]
		pf, cf := pv.Field(f.index), cv.Field(f.index)
		op := deltaOp{field: i, from: -1}
		switch f.kind {
		case deltaScalar:
			if deltaScalarEqual(pf, cf) {
				continue
			}
		case deltaSlice:
			n := deltaSliceGrowth(pf, cf)
			if n == 0 {
				continue
			}
			if n > 0 {
				op.from = pf.Len()
			}
		default:
			if reflect.DeepEqual(pf.Interface(), cf.Interface()) {
				continue
			}
		}
		if op.from < 0 {
			sets++
		}
		ops = append(ops, op)
	}
	out := make([]byte, 0, 128)
	out = append(out, '{')
	var err error
	if sets > 0 {
		if out, err = p.writeOps(append(out, deltaSet...), ops, false, cv); err != nil {
			return nil, false, err
		}
	}
	if sets < len(ops) {
		if sets > 0 {
			out = append(out, ',')
		}
		if out, err = p.writeOps(append(out, deltaAppend...), ops, true, cv); err != nil {
			return nil, false, err
		}
	}
	return append(out, '}'), true, nil
}

// deltaOp is one changed field: encoded in full (from < 0) or from element
// from on.
type deltaOp struct {
	field, from int
}

// writeOps appends the entries of the appending ops, or of the others, and
// a closing brace to out.
func (p *deltaPlan) writeOps(out []byte, ops []deltaOp, appending bool, cv reflect.Value) ([]byte, error) {
	first := true
	for _, op := range ops {
		if (op.from >= 0) != appending {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		f := &p.fields[op.field]
		v := cv.Field(f.index)
		if appending {
			v = v.Slice(op.from, v.Len())
		}
		var err error
		if out, err = deltaAppendEntry(append(out, f.key...), f, v); err != nil {
			return nil, fmt.Errorf("statgraph: JSON codec: encoding field %s of %v: %w", f.name, p.typ, err)
		}
	}
	return append(out, '}'), nil
}

// chainApplier is implemented by codecs that apply a run of deltas at once
// faster than one ApplyDelta each (see jsonCodec.applyDeltas).
type chainApplier[S any] interface {
	applyDeltas(prev S, deltas [][]byte) (S, int, error)
}

// deltaScalarEqual compares two values of the same bool, integer, float or string
// kind.
func deltaScalarEqual(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float()
	default:
		return a.String() == b.String()
	}
}

// deltaSliceGrowth reports how cur relates to prev: 0 when equal, the number of
// elements appended when prev is a prefix of cur, -1 otherwise. It is O(1)
// when cur extends prev's backing array.
func deltaSliceGrowth(prev, cur reflect.Value) int {
	pl, cl := prev.Len(), cur.Len()
	switch {
	case cl < pl:
		return -1
	case cl == 0:
		if prev.IsNil() != cur.IsNil() { // null and [] encode differently
			return -1
		}
		return 0
	case pl == 0:
		return cl
	}
	if prev.UnsafePointer() != cur.UnsafePointer() &&
		!reflect.DeepEqual(prev.Interface(), cur.Slice(0, pl).Interface()) {
		return -1
	}
	return cl - pl
}

// deltaAppendEntry appends the JSON of v, a value of field f or a part of
// it, to buf.
func deltaAppendEntry(buf []byte, f *deltaField, v reflect.Value) ([]byte, error) {
	if f.fast {
		switch v.Kind() {
		case reflect.Bool:
			return strconv.AppendBool(buf, v.Bool()), nil
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return strconv.AppendInt(buf, v.Int(), 10), nil
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			return strconv.AppendUint(buf, v.Uint(), 10), nil
		}
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return nil, err
	}
	return append(buf, b...), nil
}

// deltaKind says how MarshalDelta compares a field.
type deltaKind uint8

const (
	deltaDeep   deltaKind = iota // reflect.DeepEqual; encoded in full when different
	deltaScalar                  // bool, number or string: compared directly
	deltaSlice                   // a slice without custom JSON methods: may be appended to
)

// deltaPlan is the per-type analysis behind MarshalDelta and ApplyDelta.
type deltaPlan struct {
	typ    reflect.Type // the struct type
	ptr    bool         // the state is *typ rather than typ
	fields []deltaField // the fields encoding/json encodes, in order
	byName map[string]int
	// The full-state decoder (jsondecode.go): fields by JSON name, and
	// whether the type is one it reads.
	byJSON    map[string]int
	decodable bool
}

type deltaField struct {
	index int
	name  string
	key   []byte // `"Name":`
	typ   reflect.Type
	kind  deltaKind
	fast  bool // bool or integer without custom JSON methods: encoded with strconv
	dec   fieldDecoder
}

// field returns the field named name, or nil when the type has none.
func (p *deltaPlan) field(name string) *deltaField {
	i, ok := p.byName[name]
	if !ok {
		return nil
	}
	return &p.fields[i]
}

// deltaPlans caches deltaPlans by state type; a nil *deltaPlan records a type
// without delta encoding.
var deltaPlans sync.Map // reflect.Type -> *deltaPlan

func deltaPlanFor(t reflect.Type) *deltaPlan {
	if p, ok := deltaPlans.Load(t); ok {
		return p.(*deltaPlan)
	}
	p, _ := deltaPlans.LoadOrStore(t, buildDeltaPlan(t))
	return p.(*deltaPlan)
}

func buildDeltaPlan(t reflect.Type) *deltaPlan {
	p := &deltaPlan{typ: t, byName: map[string]int{}}
	if t.Kind() == reflect.Pointer {
		p.typ, p.ptr = t.Elem(), true
	}
	if p.typ.Kind() != reflect.Struct || hasCustomJSON(p.typ) {
		return nil
	}
	for i := range p.typ.NumField() {
		sf := p.typ.Field(i)
		if sf.Anonymous {
			return nil // encoding/json promotes embedded fields; not mirrored here
		}
		if !sf.IsExported() || sf.Tag.Get("json") == "-" {
			continue
		}
		f := deltaField{index: i, name: sf.Name, key: []byte(strconv.Quote(sf.Name) + ":"), typ: sf.Type}
		custom := hasCustomJSON(sf.Type)
		switch k := sf.Type.Kind(); {
		case k == reflect.Bool || k >= reflect.Int && k <= reflect.Float64 || k == reflect.String:
			f.kind = deltaScalar
			f.fast = !custom && k != reflect.String && k != reflect.Float32 && k != reflect.Float64
		case k == reflect.Slice && !custom:
			f.kind = deltaSlice
		}
		p.byName[f.name] = len(p.fields)
		p.fields = append(p.fields, f)
	}
	p.planDecode()
	return p
}

var (
	jsonMarshalerType   = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// hasCustomJSON reports whether t or *t changes how encoding/json treats it.
func hasCustomJSON(t reflect.Type) bool {
	for _, x := range []reflect.Type{t, reflect.PointerTo(t)} {
		if x.Implements(jsonMarshalerType) || x.Implements(jsonUnmarshalerType) ||
			x.Implements(textMarshalerType) || x.Implements(textUnmarshalerType) {
			return true
		}
	}
	return false
}

// loadState decodes the state saved in c. A delta checkpoint is rebuilt by
// following Parent links back to the nearest full checkpoint and applying
// the deltas forward; a checkpoint holding a live Value (value-keeping
// stores) returns it as is. Decoding failures and broken chains return an
// error wrapping ErrCorruptCheckpoint that names the thread and checkpoint;
// errors of cp are returned wrapped as they are.
func loadState[S any](ctx context.Context, cp Checkpointer, codec Codec[S], c *Checkpoint) (S, error) {
	var zero S
	var chain []*Checkpoint // deltas, newest first
	base := c
	for base.Value == nil && base.Delta {
		chain = append(chain, base)
		if base.Parent <= 0 || base.Parent >= base.ID {
			return zero, corruptCheckpointError(base, fmt.Errorf("delta checkpoint has parent %d, which cannot hold its base state", base.Parent))
		}
		parent, err := cp.Get(ctx, base.Thread, base.Parent)
		if errors.Is(err, ErrNoCheckpoint) {
			return zero, corruptCheckpointError(base, fmt.Errorf("its parent %d, the base of its delta, is missing", base.Parent))
		}
		if err != nil {
			return zero, fmt.Errorf("loading parent %d of checkpoint %d of thread %q: %w", base.Parent, base.ID, base.Thread, err)
		}
		base = parent
	}
	var s S
	if base.Value != nil {
		v, ok := base.Value.(S)
		if !ok {
			return zero, corruptCheckpointError(base, fmt.Errorf("it holds a value of type %T, want %T", base.Value, zero))
		}
		s = v
	} else {
		v, err := codec.Unmarshal(base.State)
		if err != nil {
			return zero, corruptCheckpointError(base, err)
		}
		s = v
	}
	if len(chain) == 0 {
		return s, nil
	}
	dc, ok := codec.(deltaCodec[S])
	if !ok {
		return zero, corruptCheckpointError(chain[0], fmt.Errorf("it is a delta but codec %T cannot apply deltas", codec))
	}
	if ca, ok := codec.(chainApplier[S]); ok && len(chain) > 1 {
		deltas := make([][]byte, len(chain))
		for i, c := range chain {
			deltas[len(chain)-1-i] = c.State
		}
		next, failed, err := ca.applyDeltas(s, deltas)
		if err != nil {
			return zero, corruptCheckpointError(chain[len(chain)-1-failed], err)
		}
		return next, nil
	}
	for i := len(chain) - 1; i >= 0; i-- {
		next, err := dc.ApplyDelta(s, chain[i].State)
		if err != nil {
			return zero, corruptCheckpointError(chain[i], err)
		}
		s = next
	}
	return s, nil
}

// corrupt wraps err as the ErrCorruptCheckpoint of checkpoint c.
func corruptCheckpointError(c *Checkpoint, err error) error {
	return fmt.Errorf("%w: thread %q checkpoint %d: %w", ErrCorruptCheckpoint, c.Thread, c.ID, err)
}
