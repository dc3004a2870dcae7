package statgraph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type codecTestInner struct {
	Name string
	Tags []string
}

type codecTestState struct {
	Count   int
	Name    string
	Done    bool
	Ratio   float64
	Small   uint8
	Inner   codecTestInner
	Meta    map[string]int
	Ptr     *codecTestInner
	History []string
	Items   []codecTestInner
	Raw     []byte
	Skipped string `json:"-"`
	Renamed string `json:"renamed,omitempty"`
	hidden  int
}

func codecTestBase() codecTestState {
	history := make([]string, 3, 8) // spare capacity: appends share the array
	copy(history, []string{"a", "b", "c"})
	return codecTestState{
		Count:   1,
		Name:    "n",
		Ratio:   0.5,
		Small:   7,
		Inner:   codecTestInner{Name: "in", Tags: []string{"x"}},
		Meta:    map[string]int{"k": 1},
		Ptr:     &codecTestInner{Name: "p"},
		History: history,
		Items:   []codecTestInner{{Name: "i0"}},
		Raw:     []byte("raw"),
		Renamed: "r",
	}
}

// codecTestDecoded is s as a full checkpoint stores and loads it, which is the
// prev a delta is applied to on resume.
func codecTestDecoded[S any](t *testing.T, c Codec[S], s S) S {
	t.Helper()
	data, err := c.Marshal(s)
	require.NoError(t, err)
	out, err := c.Unmarshal(data)
	require.NoError(t, err)
	return out
}

func codecTestJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestJSONCodecMarshalRoundTrip(t *testing.T) {
	c := newJSONCodec[codecTestState]()
	s := codecTestBase()
	s.hidden = 3
	s.Skipped = "gone"
	got := codecTestDecoded(t, c, s)
	want := s
	want.hidden, want.Skipped = 0, ""
	want.History = slices.Clip(want.History)
	assert.Equal(t, want, got)

	_, err := c.Unmarshal([]byte(`{"Count":"x"}`))
	assert.Error(t, err)
}

func TestJSONCodecDelta(t *testing.T) {
	tests := []struct {
		name       string
		change     func(s codecTestState) codecTestState
		wantSet    []string
		wantAppend map[string]string // field -> JSON of the appended elements
	}{
		{"unchanged", func(s codecTestState) codecTestState { return s }, nil, nil},
		{"int", func(s codecTestState) codecTestState { s.Count++; return s }, []string{"Count"}, nil},
		{"string", func(s codecTestState) codecTestState { s.Name = "m\"<"; return s }, []string{"Name"}, nil},
		{"bool", func(s codecTestState) codecTestState { s.Done = true; return s }, []string{"Done"}, nil},
		{"float and uint", func(s codecTestState) codecTestState { s.Ratio, s.Small = 0.25, 255; return s }, []string{"Ratio", "Small"}, nil},
		{"nested struct", func(s codecTestState) codecTestState { s.Inner.Name = "in2"; return s }, []string{"Inner"}, nil},
		{"nested struct slice appended", func(s codecTestState) codecTestState {
			s.Inner.Tags = append(s.Inner.Tags, "y")
			return s
		}, []string{"Inner"}, nil},
		{"map replaced", func(s codecTestState) codecTestState {
			s.Meta = maps.Clone(s.Meta)
			s.Meta["j"] = 2
			return s
		}, []string{"Meta"}, nil},
		{"map copied unchanged", func(s codecTestState) codecTestState { s.Meta = maps.Clone(s.Meta); return s }, nil, nil},
		{"map to nil", func(s codecTestState) codecTestState { s.Meta = nil; return s }, []string{"Meta"}, nil},
		{"pointer to equal copy", func(s codecTestState) codecTestState { p := *s.Ptr; s.Ptr = &p; return s }, nil, nil},
		{"pointer changed", func(s codecTestState) codecTestState { s.Ptr = &codecTestInner{Name: "q"}; return s }, []string{"Ptr"}, nil},
		{"pointer to nil", func(s codecTestState) codecTestState { s.Ptr = nil; return s }, []string{"Ptr"}, nil},
		{"slice appended in place", func(s codecTestState) codecTestState {
			s.History = append(s.History, "d", "e")
			return s
		}, nil, map[string]string{"History": `["d","e"]`}},
		{"slice appended after a move", func(s codecTestState) codecTestState {
			s.History = append(slices.Clip(s.History), "d")
			return s
		}, nil, map[string]string{"History": `["d"]`}},
		{"slice of structs appended", func(s codecTestState) codecTestState {
			s.Items = append(s.Items, codecTestInner{Name: "i1", Tags: []string{"t"}})
			return s
		}, nil, map[string]string{"Items": `[{"Name":"i1","Tags":["t"]}]`}},
		{"bytes appended", func(s codecTestState) codecTestState { s.Raw = append(s.Raw, '!'); return s }, nil, map[string]string{"Raw": `"IQ=="`}},
		{"slice replaced", func(s codecTestState) codecTestState { s.History = []string{"z", "b", "c"}; return s }, []string{"History"}, nil},
		{"slice copied unchanged", func(s codecTestState) codecTestState { s.History = slices.Clone(s.History); return s }, nil, nil},
		{"slice shrunk", func(s codecTestState) codecTestState { s.History = s.History[:2]; return s }, []string{"History"}, nil},
		{"slice front dropped", func(s codecTestState) codecTestState { s.History = s.History[1:]; return s }, []string{"History"}, nil},
		{"slice to empty", func(s codecTestState) codecTestState { s.History = []string{}; return s }, []string{"History"}, nil},
		{"slice to nil", func(s codecTestState) codecTestState { s.History = nil; return s }, []string{"History"}, nil},
		{"slice element changed in a copy", func(s codecTestState) codecTestState {
			s.History = slices.Clone(s.History)
			s.History[1] = "B"
			return s
		}, []string{"History"}, nil},
		{"slice element changed in a copy and appended", func(s codecTestState) codecTestState {
			h := slices.Clone(s.History)
			h[0] = "A"
			s.History = append(h, "d")
			return s
		}, []string{"History"}, nil},
		{"renamed field", func(s codecTestState) codecTestState { s.Renamed = ""; return s }, []string{"Renamed"}, nil},
		{"ignored fields", func(s codecTestState) codecTestState { s.Skipped, s.hidden = "x", 9; return s }, nil, nil},
		{"several", func(s codecTestState) codecTestState {
			s.Count, s.Done = 5, true
			s.History = append(s.History, "d")
			s.Items = append(s.Items, codecTestInner{Name: "i1"})
			return s
		}, []string{"Count", "Done"}, map[string]string{"History": `["d"]`, "Items": `[{"Name":"i1","Tags":null}]`}},
	}
	c := newJSONCodec[codecTestState]()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prev := codecTestBase()
			cur := tt.change(prev)
			delta, ok, err := c.MarshalDelta(prev, cur)
			require.NoError(t, err)
			require.True(t, ok)

			var doc deltaDoc
			require.NoError(t, json.Unmarshal(delta, &doc), "delta %s", delta)
			assert.ElementsMatch(t, tt.wantSet, slices.Collect(maps.Keys(doc.Set)), "set part of %s", delta)
			gotAppend := map[string]string{}
			for k, v := range doc.Append {
				gotAppend[k] = string(v)
			}
			if tt.wantAppend == nil {
				tt.wantAppend = map[string]string{}
			}
			assert.Equal(t, tt.wantAppend, gotAppend, "append part of %s", delta)

			// Applied to prev as a load sees it, the delta rebuilds cur.
			got, err := c.ApplyDelta(codecTestDecoded(t, c, prev), delta)
			require.NoError(t, err)
			assert.Equal(t, codecTestJSON(t, cur), codecTestJSON(t, got))
			assert.Zero(t, got.hidden)
			assert.Empty(t, got.Skipped)
		})
	}
}

// TestJSONCodecDeltaInPlaceLimit records the documented limit: an element
// written in place into an array prev and cur share is not seen, because
// prev shows the same change.
func TestJSONCodecDeltaInPlaceLimit(t *testing.T) {
	c := newJSONCodec[codecTestState]()
	prev := codecTestBase()
	stored := codecTestDecoded(t, c, prev)
	cur := prev
	cur.History[0] = "changed in place" // also changes prev.History[0]
	delta, ok, err := c.MarshalDelta(prev, cur)
	require.NoError(t, err)
	require.True(t, ok)
	assert.JSONEq(t, `{}`, string(delta))
	got, err := c.ApplyDelta(stored, delta)
	require.NoError(t, err)
	assert.Equal(t, "a", got.History[0], "the in-place write is lost from the delta chain")
}

func TestJSONCodecApplyDeltaCopiesAppendedSlices(t *testing.T) {
	c := newJSONCodec[codecTestState]()
	prev := codecTestBase() // History has spare capacity
	cur := prev
	cur.History = append(cur.History, "d")
	delta, _, err := c.MarshalDelta(prev, cur)
	require.NoError(t, err)

	got, err := c.ApplyDelta(prev, delta)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c", "d"}, got.History)
	assert.Equal(t, len(got.History), cap(got.History))

	_ = append(prev.History, "overwrites the spare slot") // a later append to prev
	assert.Equal(t, "d", got.History[3])
	got.History[0] = "mutated"
	assert.Equal(t, "a", prev.History[0])
}

func TestJSONCodecPointerState(t *testing.T) {
	c := newJSONCodec[*codecTestState]()
	prev := codecTestBase()
	cur := prev
	cur.Count = 9
	cur.History = append(cur.History, "d")
	delta, ok, err := c.MarshalDelta(&prev, &cur)
	require.NoError(t, err)
	require.True(t, ok)
	stored := codecTestDecoded(t, c, &prev)
	got, err := c.ApplyDelta(stored, delta)
	require.NoError(t, err)
	assert.Equal(t, codecTestJSON(t, &cur), codecTestJSON(t, got))
	assert.NotSame(t, stored, got)
	assert.Equal(t, 1, stored.Count, "prev is not modified")

	_, ok, err = c.MarshalDelta(nil, &cur)
	require.NoError(t, err)
	assert.False(t, ok)
	_, err = c.ApplyDelta(nil, delta)
	assert.Error(t, err)
}

// TestJSONCodecApplyGrowing: History's walk applies successive deltas with
// appends in place into one array that the walk owns, and hands out states
// that share it but end at their own length, for value and pointer states.
func TestJSONCodecApplyGrowing(t *testing.T) {
	var seq []codecTestState // what MarshalDelta saw, each step decoded anew
	cur := codecTestBase()
	cur.History = slices.Clip(cur.History)
	for i := range 40 {
		seq = append(seq, cur)
		var next codecTestState
		require.NoError(t, json.Unmarshal([]byte(codecTestJSON(t, cur)), &next))
		next.History = append(next.History, fmt.Sprint("entry ", i))
		next.Count = i
		if i == 20 {
			next.History = []string{"reset"} // set in full: a fresh slice the walk owns
		}
		cur = next
	}
	t.Run("value", func(t *testing.T) {
		testApplyGrowing(t, newJSONCodec[codecTestState](), seq,
			func(s codecTestState) codecTestState { return s }, func(s codecTestState) *codecTestState { return &s })
	})
	t.Run("pointer", func(t *testing.T) {
		testApplyGrowing(t, newJSONCodec[*codecTestState](), seq,
			func(s codecTestState) *codecTestState { return &s }, func(s *codecTestState) *codecTestState { return s })
	})
}

func testApplyGrowing[S any](t *testing.T, c jsonCodec[S], seq []codecTestState, wrap func(codecTestState) S, deref func(S) *codecTestState) {
	w := &growWalk{owned: map[int]bool{}}
	live := wrap(seq[0])
	var out []S
	for i := 1; i < len(seq); i++ {
		delta, ok, err := c.MarshalDelta(wrap(seq[i-1]), wrap(seq[i]))
		require.NoError(t, err)
		require.True(t, ok)
		var o S
		live, o, err = c.applyGrowing(live, delta, w)
		require.NoError(t, err)
		h := deref(o).History
		require.Equal(t, len(h), cap(h), "state %d ends at its length", i)
		out = append(out, o)
	}
	require.True(t, w.owned[deref(live).indexOfHistory()], "the walk appends in place")
	for i, o := range out {
		_ = append(deref(o).History, "appended by the caller") // must copy, not write into the next state
		require.Equal(t, codecTestJSON(t, seq[i+1]), codecTestJSON(t, deref(o)), "state %d", i+1)
	}
	for i, o := range out {
		require.Equal(t, codecTestJSON(t, seq[i+1]), codecTestJSON(t, deref(o)), "state %d after the appends", i+1)
	}
	if reflect.TypeFor[S]().Kind() == reflect.Pointer {
		require.NotSame(t, deref(out[0]), deref(out[1]))
		require.NotSame(t, deref(live), deref(out[len(out)-1]), "the live state is the walk's own")
	}
}

// indexOfHistory is the struct field index of History, as owned keys it.
func (codecTestState) indexOfHistory() int {
	f, _ := reflect.TypeFor[codecTestState]().FieldByName("History")
	return f.Index[0]
}

type codecTestCustom struct{ N int }

func (c codecTestCustom) MarshalJSON() ([]byte, error) { return json.Marshal(c.N) }

type codecTestEmbedded struct {
	codecTestInner
	N int
}

type codecTestLevel int

func (l codecTestLevel) MarshalJSON() ([]byte, error) { return json.Marshal(fmt.Sprintf("L%d", l)) }

func (l *codecTestLevel) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	_, err := fmt.Sscanf(s, "L%d", (*int)(l))
	return err
}

type codecTestWithLevel struct {
	Level codecTestLevel
	N     int
}

func TestJSONCodecNoDelta(t *testing.T) {
	check := func(t *testing.T, ok bool, err error) {
		t.Helper()
		require.NoError(t, err)
		assert.False(t, ok)
	}
	t.Run("slice state", func(t *testing.T) {
		c := newJSONCodec[[]string]()
		_, ok, err := c.MarshalDelta([]string{"a"}, []string{"a", "b"})
		check(t, ok, err)
		_, err = c.ApplyDelta(nil, []byte(`{}`))
		assert.ErrorContains(t, err, "[]string has no delta encoding")
	})
	t.Run("int state", func(t *testing.T) {
		_, ok, err := newJSONCodec[int]().MarshalDelta(1, 2)
		check(t, ok, err)
	})
	t.Run("custom MarshalJSON", func(t *testing.T) {
		_, ok, err := newJSONCodec[codecTestCustom]().MarshalDelta(codecTestCustom{1}, codecTestCustom{2})
		check(t, ok, err)
	})
	t.Run("embedded field", func(t *testing.T) {
		_, ok, err := newJSONCodec[codecTestEmbedded]().MarshalDelta(codecTestEmbedded{}, codecTestEmbedded{N: 1})
		check(t, ok, err)
	})
}

func TestJSONCodecCustomFieldEncoding(t *testing.T) {
	c := newJSONCodec[codecTestWithLevel]()
	delta, ok, err := c.MarshalDelta(codecTestWithLevel{Level: 1}, codecTestWithLevel{Level: 2, N: 3})
	require.NoError(t, err)
	require.True(t, ok)
	assert.JSONEq(t, `{"s":{"Level":"L2","N":3}}`, string(delta))
	got, err := c.ApplyDelta(codecTestWithLevel{Level: 1}, delta)
	require.NoError(t, err)
	assert.Equal(t, codecTestWithLevel{Level: 2, N: 3}, got)
}

func TestJSONCodecMarshalDeltaError(t *testing.T) {
	type withFunc struct{ F func() }
	_, _, err := newJSONCodec[withFunc]().MarshalDelta(withFunc{}, withFunc{F: func() {}})
	assert.ErrorContains(t, err, "field F")
}

func TestJSONCodecApplyDeltaIgnoresUnknownFields(t *testing.T) {
	c := newJSONCodec[codecTestState]()
	got, err := c.ApplyDelta(codecTestState{Count: 1}, []byte(`{"s":{"Removed":1,"hidden":2,"Count":3},"a":{"Gone":[1]}}`))
	require.NoError(t, err)
	assert.Equal(t, codecTestState{Count: 3}, got)
}

func TestJSONCodecApplyDeltaErrors(t *testing.T) {
	c := newJSONCodec[codecTestState]()
	tests := []struct{ name, delta, want string }{
		{"not JSON", `{"s":`, "decoding delta"},
		{"wrong type", `{"s":{"Count":"x"}}`, "decoding field Count"},
		{"append to non-slice", `{"a":{"Count":[1]}}`, "not a slice"},
		{"append wrong type", `{"a":{"History":[1]}}`, "appended to field History"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.ApplyDelta(codecTestBase(), []byte(tt.delta))
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

// TestJSONCodecDeltaChainProperty applies random sequences of changes that
// follow value semantics, writes a delta chain with a full state every few
// checkpoints, and checks that loading each checkpoint gives what a full
// encoding of the live state gives.
func TestJSONCodecDeltaChainProperty(t *testing.T) {
	c := newJSONCodec[codecTestState]()
	for seed := range uint64(50) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 1))
			store := &codecTestStore{}
			live := codecTestBase()
			for id := int64(1); id <= 80; id++ {
				prev := live
				live = codecTestRandomChange(r, live)
				cp := &Checkpoint{Thread: "t", ID: id, Parent: id - 1}
				delta, ok, err := c.MarshalDelta(prev, live)
				require.NoError(t, err)
				require.True(t, ok)
				if id%7 == 1 { // a full state now and then, as the engine writes one
					cp.State, err = c.Marshal(live)
					require.NoError(t, err)
				} else {
					cp.State, cp.Delta = delta, true
				}
				store.put(cp)
				got, err := loadState(t.Context(), store, c, cp)
				require.NoError(t, err)
				require.Equal(t, codecTestJSON(t, live), codecTestJSON(t, got), "checkpoint %d", id)
			}
		})
	}
}

func codecTestRandomChange(r *rand.Rand, s codecTestState) codecTestState {
	for range 1 + r.IntN(3) {
		switch r.IntN(12) {
		case 0:
			s.Count = r.IntN(5)
		case 1:
			s.Name = strings.Repeat("x", r.IntN(3))
		case 2:
			s.Done = !s.Done
		case 3:
			s.Inner = codecTestInner{Name: fmt.Sprint(r.IntN(3)), Tags: append(s.Inner.Tags, "t")}
		case 4:
			m := maps.Clone(s.Meta)
			if m == nil {
				m = map[string]int{}
			}
			m[fmt.Sprint(r.IntN(4))] = r.IntN(3)
			s.Meta = m
		case 5:
			if r.IntN(2) == 0 {
				s.Ptr = nil
			} else {
				s.Ptr = &codecTestInner{Name: fmt.Sprint(r.IntN(2))}
			}
		case 6, 7:
			s.History = append(s.History, fmt.Sprint(r.IntN(100)))
		case 8:
			if n := len(s.History); n > 0 {
				// Clipped: appending to a slice shortened in place would
				// write into prev's array (the documented in-place limit).
				s.History = slices.Clip(s.History[:r.IntN(n)])
			} else {
				s.History = nil
			}
		case 9:
			if n := len(s.History); n > 0 {
				h := slices.Clone(s.History)
				h[r.IntN(n)] = "edited"
				s.History = h
			}
		case 10:
			s.Items = append(s.Items, codecTestInner{Name: fmt.Sprint(r.IntN(9))})
		case 11:
			s.Raw = append(s.Raw, byte(r.IntN(256)))
		}
	}
	return s
}

// codecTestStore is a minimal Checkpointer for loadState.
type codecTestStore struct {
	cps    map[int64]*Checkpoint
	getErr error
}

func (s *codecTestStore) put(cp *Checkpoint) {
	if s.cps == nil {
		s.cps = map[int64]*Checkpoint{}
	}
	s.cps[cp.ID] = cp
}

func (s *codecTestStore) Put(_ context.Context, cp *Checkpoint) error { s.put(cp); return nil }

func (s *codecTestStore) Get(_ context.Context, thread string, id int64) (*Checkpoint, error) {
	if s.getErr != nil {
		return nil, s.getErr
	}
	cp, ok := s.cps[id]
	if !ok || cp.Thread != thread {
		return nil, fmt.Errorf("thread %q checkpoint %d: %w", thread, id, ErrNoCheckpoint)
	}
	return cp, nil
}

func (s *codecTestStore) Range(context.Context, string, int64, int64, int) ([]*Checkpoint, error) {
	return nil, errors.New("not used")
}

func (s *codecTestStore) Delete(context.Context, string, int64) (int, error) {
	return 0, errors.New("not used")
}

func (s *codecTestStore) PutWrites(context.Context, string, int64, []PendingWrite) error {
	return errors.New("not used")
}

// codecTestChain stores a full checkpoint 1 with Count=1 and deltas 2..4
// each adding 1 to Count and one History entry.
func codecTestChain(t *testing.T) (*codecTestStore, deltaCodec[codecTestState]) {
	t.Helper()
	c := newJSONCodec[codecTestState]()
	store := &codecTestStore{}
	s := codecTestState{Count: 1}
	full, err := c.Marshal(s)
	require.NoError(t, err)
	store.put(&Checkpoint{Thread: "t", ID: 1, State: full})
	for id := int64(2); id <= 4; id++ {
		next := s
		next.Count++
		next.History = append(next.History, fmt.Sprint(id))
		delta, _, err := c.MarshalDelta(s, next)
		require.NoError(t, err)
		store.put(&Checkpoint{Thread: "t", ID: id, Parent: id - 1, State: delta, Delta: true})
		s = next
	}
	return store, c
}

func TestLoadState(t *testing.T) {
	store, c := codecTestChain(t)
	got, err := loadState(t.Context(), store, c, store.cps[4])
	require.NoError(t, err)
	assert.Equal(t, codecTestState{Count: 4, History: []string{"2", "3", "4"}}, got)

	got, err = loadState(t.Context(), store, c, store.cps[1])
	require.NoError(t, err)
	assert.Equal(t, codecTestState{Count: 1}, got)

	live := codecTestState{Count: 42}
	got, err = loadState(t.Context(), store, c, &Checkpoint{Thread: "t", ID: 5, Value: live})
	require.NoError(t, err)
	assert.Equal(t, live, got)

	store.cps[2].Value = codecTestState{Count: 20, Name: "from value"}
	got, err = loadState(t.Context(), store, c, store.cps[4])
	require.NoError(t, err)
	assert.Equal(t, codecTestState{Count: 4, Name: "from value", History: []string{"3", "4"}}, got, "a value-keeping parent is the base")
}

func TestLoadStateErrors(t *testing.T) {
	tests := []struct {
		name    string
		breakIt func(s *codecTestStore)
		codec   func(c deltaCodec[codecTestState]) Codec[codecTestState]
		want    string
	}{
		{name: "missing parent", breakIt: func(s *codecTestStore) { delete(s.cps, 2) },
			want: `thread "t" checkpoint 3: its parent 2`},
		{name: "bad full state", breakIt: func(s *codecTestStore) { s.cps[1].State = []byte("{") },
			want: `thread "t" checkpoint 1: unexpected end`},
		{name: "bad delta", breakIt: func(s *codecTestStore) { s.cps[3].State = []byte(`{"s":{"Count":"x"}}`) },
			want: `thread "t" checkpoint 3: statgraph: JSON codec: decoding field Count`},
		{name: "delta without parent", breakIt: func(s *codecTestStore) { s.cps[2].Parent = 0 },
			want: `thread "t" checkpoint 2: delta checkpoint has parent 0`},
		{name: "parent loop", breakIt: func(s *codecTestStore) { s.cps[2].Parent = 3 },
			want: `thread "t" checkpoint 2: delta checkpoint has parent 3`},
		{name: "value of the wrong type", breakIt: func(s *codecTestStore) { s.cps[2].Value = "text" },
			want: `thread "t" checkpoint 2: it holds a value of type string`},
		{name: "codec without deltas",
			codec: func(c deltaCodec[codecTestState]) Codec[codecTestState] { return struct{ Codec[codecTestState] }{c} },
			want:  `thread "t" checkpoint 4: it is a delta but codec`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, c := codecTestChain(t)
			if tt.breakIt != nil {
				tt.breakIt(store)
			}
			var codec Codec[codecTestState] = c
			if tt.codec != nil {
				codec = tt.codec(c)
			}
			_, err := loadState(t.Context(), store, codec, store.cps[4])
			require.ErrorIs(t, err, ErrCorruptCheckpoint)
			assert.ErrorContains(t, err, tt.want)
		})
	}

	t.Run("store error", func(t *testing.T) {
		store, c := codecTestChain(t)
		boom := errors.New("disk on fire")
		store.getErr = boom
		_, err := loadState(t.Context(), store, c, store.cps[4])
		require.ErrorIs(t, err, boom)
		assert.NotErrorIs(t, err, ErrCorruptCheckpoint)
		assert.ErrorContains(t, err, `loading parent 3 of checkpoint 4 of thread "t"`)
	})
}

// codecBenchState is the W1 benchmark state.
type codecBenchState struct {
	RetryCount, MaxRetries int
	Passed                 bool
	ErrorHistory           []string
}

// codecBenchStep returns a state after n appends and the state one retry
// later, as a W1 loop step produces them.
func codecBenchStep(n int) (prev, cur codecBenchState) {
	for i := range n {
		prev.ErrorHistory = append(prev.ErrorHistory, fmt.Sprintf("attempt %d: test TestFoo failed: expected 4, got 5", i))
	}
	prev.RetryCount, prev.MaxRetries = n, n+10
	cur = prev
	cur.RetryCount++
	cur.ErrorHistory = append(cur.ErrorHistory, "attempt n: test TestFoo failed: expected 4, got 5")
	return prev, cur
}

func BenchmarkMarshalDelta(b *testing.B) {
	c := newJSONCodec[codecBenchState]()
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprint("appends=", n), func(b *testing.B) {
			prev, cur := codecBenchStep(n)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := c.MarshalDelta(prev, cur); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkMarshalFull(b *testing.B) {
	c := newJSONCodec[codecBenchState]()
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprint("appends=", n), func(b *testing.B) {
			_, cur := codecBenchStep(n)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Marshal(cur); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestJSONCodecDeltaFormat pins the delta the default codec writes for a
// step that set a scalar and appended to a slice: the changed scalar under
// "s", only the new elements under "a".
func TestJSONCodecDeltaFormat(t *testing.T) {
	type state struct {
		RetryCount   int
		Passed       bool
		ErrorHistory []string
	}
	codec := newJSONCodec[state]()
	prev := state{RetryCount: 1, ErrorHistory: []string{"lint failed"}}
	cur := prev
	cur.RetryCount++
	cur.ErrorHistory = append(cur.ErrorHistory, "test failed")

	delta, ok, err := codec.MarshalDelta(prev, cur)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, `{"s":{"RetryCount":2},"a":{"ErrorHistory":["test failed"]}}`, string(delta))
	next, err := codec.ApplyDelta(prev, delta)
	require.NoError(t, err)
	require.Equal(t, cur, next)
}
