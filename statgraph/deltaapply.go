package statgraph

// The JSON codec's side that applies deltas: one at a time, a chain at
// once (State), and the oldest-first walk of History that shares what
// each snapshot appends.

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
)

func (c jsonCodec[S]) ApplyDelta(prev S, delta []byte) (S, error) {
	s, _, err := c.applyDeltas(prev, [][]byte{delta})
	return s, err
}

// applyDeltas applies deltas to prev in order, as ApplyDelta would one
// after the other, but appends to each slice field in place in one array of
// its own that grows by doubling, so rebuilding a state from a long chain
// costs O(its size) and not O(size × chain). On failure it returns the
// index of the delta that failed.
func (c jsonCodec[S]) applyDeltas(prev S, deltas [][]byte) (S, int, error) {
	if len(deltas) > 1 {
		if s, ok := c.applyMerged(prev, deltas); ok {
			return s, 0, nil
		}
	}
	var out S
	owned := map[int]bool{}
	ov, err := c.startFrom(prev, &out)
	if err != nil {
		return out, 0, err
	}
	if di, err := c.plan.applyInto(ov, deltas, owned, false, new([]deltaEntry)); err != nil {
		return out, di, err
	}
	clipOwned(ov, owned)
	return out, 0, nil
}

// growWalk is what an oldest-first walk of a thread's checkpoints
// (History) keeps between the deltas it applies with applyGrowing.
type growWalk struct {
	// owned marks the fields of the live state whose array the walk made;
	// empty when the live state was handed out itself.
	owned   map[int]bool
	entries []deltaEntry // the entries of the last delta, reused
}

// applyGrowing applies delta to live, a state of an oldest-first walk of a
// thread's checkpoints (History), and returns the new live state and a
// copy of it to hand out. Elements appended to the fields w.owned marks go
// in place, into room that grows by doubling, so each snapshot's state
// costs O(what its delta adds) and not O(its size). The copy ends its
// slices at their length, so appending to one copies; it shares its
// elements with the states handed out before and after it.
func (c jsonCodec[S]) applyGrowing(live S, delta []byte, w *growWalk) (next, out S, err error) {
	nv, err := c.startFrom(live, &next)
	if err != nil {
		return next, out, err
	}
	deltas := [1][]byte{delta}
	if _, err := c.plan.applyInto(nv, deltas[:], w.owned, true, &w.entries); err != nil {
		return next, out, err
	}
	out = next
	ov := reflect.ValueOf(&out).Elem()
	if c.plan.ptr {
		cp := reflect.New(c.plan.typ)
		cp.Elem().Set(nv)
		ov.Set(cp)
		ov = cp.Elem()
	}
	clipOwned(ov, w.owned)
	return next, out, nil
}

// startFrom sets *out to a new state holding prev's encoded fields, as a
// full decode would, and returns the struct value to apply deltas to.
func (c jsonCodec[S]) startFrom(prev S, out *S) (reflect.Value, error) {
	p := c.plan
	if p == nil {
		return reflect.Value{}, fmt.Errorf("statgraph: JSON codec: state type %v has no delta encoding", reflect.TypeFor[S]())
	}
	pv, ov := reflect.ValueOf(&prev).Elem(), reflect.ValueOf(out).Elem()
	if p.ptr {
		if pv.IsNil() {
			return reflect.Value{}, errors.New("statgraph: JSON codec: applying a delta to a nil state")
		}
		pv = pv.Elem()
		nv := reflect.New(p.typ)
		ov.Set(nv)
		ov = nv.Elem()
	}
	for i := range p.fields {
		ov.Field(p.fields[i].index).Set(pv.Field(p.fields[i].index))
	}
	return ov, nil
}

// applyInto applies deltas in order to the struct ov. owned marks the
// fields whose array this application made: appends go there in place.
// A field appended to that is not owned gets a new array, exactly its new
// length for the last delta unless room is set, else twice that. entries
// is a buffer for the deltas' entries. On failure it returns the index of
// the delta that failed.
func (p *deltaPlan) applyInto(ov reflect.Value, deltas [][]byte, owned map[int]bool, room bool, entries *[]deltaEntry) (int, error) {
	for di, delta := range deltas {
		es, err := p.entries(delta, (*entries)[:0])
		if err != nil {
			return di, fmt.Errorf("statgraph: JSON codec: decoding delta: %w", err)
		}
		*entries = es
		for _, e := range es {
			f := e.f
			if e.appending {
				continue
			}
			field := ov.Field(f.index)
			owned[f.index] = f.kind == deltaSlice // a fresh slice: appending to it writes nothing shared
			if f.kind == deltaScalar {
				field.SetZero() // as a new value: null leaves it zero
				if f.decodeField(e.raw, field) {
					continue
				}
			}
			v := reflect.New(f.typ)
			if err := f.unmarshal(e.raw, v); err != nil {
				return di, fmt.Errorf("statgraph: JSON codec: decoding field %s of %v: %w", f.name, p.typ, err)
			}
			field.Set(v.Elem())
		}
		for _, e := range es {
			f := e.f
			if !e.appending {
				continue
			}
			if f.kind != deltaSlice {
				return di, fmt.Errorf("statgraph: JSON codec: delta appends to field %s of %v, which is not a slice", f.name, p.typ)
			}
			v := reflect.New(f.typ)
			if err := f.unmarshal(e.raw, v); err != nil {
				return di, fmt.Errorf("statgraph: JSON codec: decoding elements appended to field %s of %v: %w", f.name, p.typ, err)
			}
			base, added := ov.Field(f.index), v.Elem()
			if owned[f.index] {
				if b, ok := base.Addr().Interface().(*[]string); ok { // the common case, without reflection
					*b = append(*b, *v.Interface().(*[]string)...)
				} else {
					base.Set(reflect.AppendSlice(base, added))
				}
				continue
			}
			// A new array: appending to prev's slice later must not write
			// into the result, nor the reverse. Exactly the total length
			// for one delta, room to grow for more.
			n := base.Len() + added.Len()
			capacity := n
			if room || di < len(deltas)-1 {
				capacity = 2 * n
			}
			joined := reflect.MakeSlice(f.typ, n, capacity)
			reflect.Copy(joined, base)
			reflect.Copy(joined.Slice(base.Len(), n), added)
			base.Set(joined)
			owned[f.index] = true
		}
	}
	return 0, nil
}

// clipOwned ends the owned slice fields of the struct ov at their length,
// so that appending to them copies instead of writing into what another
// state may share.
func clipOwned(ov reflect.Value, owned map[int]bool) {
	for i := range owned {
		f := ov.Field(i)
		if f.Kind() != reflect.Slice || f.Cap() == f.Len() {
			continue
		}
		if s, ok := f.Addr().Interface().(*[]string); ok { // the common case, without reflection
			*s = slices.Clip(*s)
		} else {
			f.Set(f.Slice3(0, f.Len(), f.Len()))
		}
	}
}

// applyMerged is applyDeltas with the deltas merged field by field first:
// the last value set and the elements appended after it, each field
// decoded with one Unmarshal. ok is false when the deltas do not decode
// (the caller then applies them one by one, which names the failing one).
func (c jsonCodec[S]) applyMerged(prev S, deltas [][]byte) (out S, ok bool) {
	p := c.plan
	if p == nil {
		return out, false
	}
	type merged struct {
		set    reflect.Value // the last value set, invalid when none
		setRaw []byte        // or its JSON, checked but not yet decoded
		app    []byte        // elements appended since, comma-separated
	}
	acc := map[*deltaField]*merged{}
	get := func(f *deltaField) *merged {
		m := acc[f]
		if m == nil {
			m = &merged{}
			acc[f] = m
		}
		return m
	}
	var entries []deltaEntry
	for _, delta := range deltas {
		var err error
		if entries, err = p.entries(delta, entries[:0]); err != nil {
			return out, false
		}
		for _, e := range entries {
			f := e.f
			if e.appending {
				continue
			}
			// Checked now, as one by one would, so a bad value
			// is found even when a later delta sets the field
			// again; a scalar is decoded only if it is the last.
			m := get(f)
			if len(m.app) > 0 && f.unmarshal(append(append([]byte{'['}, m.app...), ']'), reflect.New(f.typ)) != nil {
				return out, false // elements this value replaces do not decode
			}
			m.app = m.app[:0]
			if f.check(e.raw) {
				m.set, m.setRaw = reflect.Value{}, e.raw
				continue
			}
			v := reflect.New(f.typ)
			if f.unmarshal(e.raw, v) != nil {
				return out, false
			}
			m.set, m.setRaw = v.Elem(), nil
		}
		for _, e := range entries {
			f := e.f
			if !e.appending {
				continue
			}
			raw := bytes.TrimSpace(e.raw)
			if f.kind != deltaSlice || len(raw) < 2 || raw[0] != '[' || raw[len(raw)-1] != ']' {
				return out, false
			}
			inner := bytes.TrimSpace(raw[1 : len(raw)-1])
			if len(inner) == 0 {
				continue
			}
			m := get(f)
			if len(m.app) > 0 {
				m.app = append(m.app, ',')
			}
			m.app = append(m.app, inner...)
		}
	}
	ov, err := c.startFrom(prev, &out)
	if err != nil {
		return out, false
	}
	for f, m := range acc {
		field := ov.Field(f.index)
		if m.setRaw != nil {
			v := reflect.New(f.typ)
			if f.unmarshal(m.setRaw, v) != nil {
				return out, false
			}
			m.set = v.Elem()
		}
		if m.set.IsValid() {
			field.Set(m.set)
		}
		if len(m.app) == 0 {
			continue
		}
		v := reflect.New(f.typ)
		if f.unmarshal(append(append([]byte{'['}, m.app...), ']'), v) != nil {
			return out, false
		}
		base, added := field, v.Elem()
		n := base.Len() + added.Len()
		joined := reflect.MakeSlice(f.typ, n, n)
		reflect.Copy(joined, base)
		reflect.Copy(joined.Slice(base.Len(), n), added)
		field.Set(joined)
	}
	return out, true
}
