package statgraph

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"testing"
)

type scanState struct {
	N    int
	Name string
	Log  []string
	Meta map[string]any
	skip int
}

// docEntries decodes delta the way the codec did before scanDelta: through
// deltaDoc's maps.
func docEntries(t *testing.T, p *deltaPlan, delta []byte) []string {
	t.Helper()
	var d deltaDoc
	if err := json.Unmarshal(delta, &d); err != nil {
		t.Fatalf("%s: %v", delta, err)
	}
	var out []string
	for name, raw := range d.Set {
		if p.field(name) != nil {
			out = append(out, fmt.Sprintf("set %s %s", name, raw))
		}
	}
	for name, raw := range d.Append {
		if p.field(name) != nil {
			out = append(out, fmt.Sprintf("append %s %s", name, raw))
		}
	}
	sort.Strings(out)
	return out
}

func describeEntries(es []deltaEntry) []string {
	var out []string
	for _, e := range es {
		op := "set"
		if e.appending {
			op = "append"
		}
		out = append(out, fmt.Sprintf("%s %s %s", op, e.f.name, e.raw))
	}
	sort.Strings(out)
	return out
}

// TestDeltaEntriesMatchDeltaDoc checks that the in-place walk of a delta
// gives the entries the map decode gives, for deltas MarshalDelta writes
// and for hand-written ones, and that it takes the in-place path exactly
// for the canonical form.
func TestDeltaEntriesMatchDeltaDoc(t *testing.T) {
	p := deltaPlanFor(reflect.TypeFor[scanState]())
	c := newJSONCodec[scanState]()
	prev := scanState{N: 1, Log: []string{"a"}}
	cur := prev
	cur.N, cur.Name, cur.Log = 2, `q"}{,]["\u00e9 \\`, append(cur.Log, "b}", `c"]`)
	cur.Meta = map[string]any{"k": []any{1.0, map[string]any{"x": "}"}}}
	written, ok, err := c.MarshalDelta(prev, cur)
	if err != nil || !ok {
		t.Fatalf("MarshalDelta: ok=%v err=%v", ok, err)
	}
	cases := []struct {
		delta  string
		inline bool // walked in place
	}{
		{string(written), true},
		{`{}`, true},
		{` { "s" : { "N" : 3 , "Gone" : {"a":[1,"]"]} } , "a" : { "Log" : [ "x" , "y" ] } } `, true},
		{`{"s":{"N":-1.5e3,"Name":null,"Meta":{}}}`, true},
		{`{"a":{"Log":[]}}`, true},
		{`{"a":{"Log":["x"]},"s":{"N":4}}`, false},     // parts out of order
		{`{"s":{"N":4},"s":{"Name":"z"}}`, false},      // a part twice
		{`{"s":{"N":4,"N":5}}`, false},                 // a field twice
		{`{"s":{"\u004e":4}}`, false},                  // escaped key
		{`{"s":null,"a":{"Log":["x"]}}`, false},        // null part
		{`{"S":{"N":4}}`, false},                       // key matched by case folding
		{`{"x":1,"s":{"N":4}}`, false},                 // unknown top-level key
		{`{"s":{"Gone":1,"Gone":2,"Name":"n"}}`, true}, // unknown field twice: ignored either way
	}
	for _, tc := range cases {
		d := []byte(tc.delta)
		_, inline := p.scanDelta(d, nil)
		if inline != tc.inline {
			t.Errorf("%s: walked in place = %v, want %v", d, inline, tc.inline)
		}
		got, err := p.entries(d, nil)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		if g, w := describeEntries(got), docEntries(t, p, d); !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n got %q\nwant %q", d, g, w)
		}
	}
	for _, bad := range []string{`{"s":{"N":}}`, `{"s":{"N":1}`, `[`, `{"s":{"N":1}} x`} {
		if _, err := p.entries([]byte(bad), nil); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// TestApplyDeltasAllocations checks that rebuilding a state from a chain of
// appending deltas allocates a bounded number of objects per delta; decoding
// each delta into deltaDoc's maps took 21.
func TestApplyDeltasAllocations(t *testing.T) {
	c := newJSONCodec[scanState]()
	s := scanState{Log: []string{}}
	var deltas [][]byte
	for i := range 1000 {
		next := s
		next.N = i
		next.Log = append(s.Log[:len(s.Log):len(s.Log)], fmt.Sprintf("entry %d", i))
		d, ok, err := c.MarshalDelta(s, next)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		deltas, s = append(deltas, d), next
	}
	var got scanState
	allocs := testing.AllocsPerRun(5, func() {
		var err error
		if got, _, err = c.applyDeltas(scanState{Log: []string{}}, deltas); err != nil {
			t.Fatal(err)
		}
	})
	if !reflect.DeepEqual(got.Log, s.Log) || got.N != s.N {
		t.Fatalf("rebuilt N=%d with %d entries, want N=%d with %d", got.N, len(got.Log), s.N, len(s.Log))
	}
	// The floor is about 3: the new string, the set value N and its decoder.
	if per := allocs / float64(len(deltas)); per > 5 {
		t.Errorf("applyDeltas allocated %.0f objects for %d deltas (%.1f per delta), want at most 5 per delta", allocs, len(deltas), per)
	}
}

// TestScanDeltaRejectsInvalidJSON checks that the in-place walk, which no
// longer runs after json.Valid, takes no delta that is not valid JSON,
// whether the fault is in a known field's value, an unknown field's value
// or the structure; entries then gives encoding/json's error.
func TestScanDeltaRejectsInvalidJSON(t *testing.T) {
	p := deltaPlanFor(reflect.TypeFor[scanState]())
	for _, bad := range []string{
		`{"s":{"N":1x}}`, `{"s":{"N":01}}`, `{"s":{"N":-}}`, `{"s":{"N":1.}}`, `{"s":{"N":1e}}`,
		`{"s":{"Name":"a` + "\x01" + `"}}`, `{"s":{"Name":"\q"}}`, `{"s":{"Name":"\u12g4"}}`,
		`{"s":{"Gone":[1,]}}`, `{"s":{"Gone":{"a" 1}}}`, `{"s":{"Gone":tru}}`, `{"s":{"Gone":nul}}`,
		`{"a":{"Log":["x",]}}`, `{"a":{"Log":["x"}}}`, `{"s":{"N":1,}}`, `{"s":{"N":1}},`,
		`{"s":{"N":1}`, `{"s":{"N":1} "a":{}}`, `{"s":{"N" 1}}`, `{"s":{"N":1}} x`, `{"s":{"N":1}}}`,
		`{"s":{"N":"1}}`, `{"s":{"Gone":"\`,
	} {
		if _, ok := p.scanDelta([]byte(bad), nil); ok {
			t.Errorf("%s: walked in place, but it is not valid JSON", bad)
		}
		if _, err := p.entries([]byte(bad), nil); err == nil {
			t.Errorf("%s: entries gave no error", bad)
		}
	}
}

// FuzzScanDelta checks the in-place walk against encoding/json on any
// input: it accepts only valid JSON, and then gives the entries the map
// decode gives; entries fails exactly when encoding/json does.
func FuzzScanDelta(f *testing.F) {
	for _, s := range []string{`{}`, `{"s":{"N":3,"Gone":{"a":[1,"]"]}},"a":{"Log":["x","y"]}}`,
		`{"s":{"N":-1.5e3,"Name":null,"Meta":{"k":[true,false]}}}`, `{"a":{"Log":["\u00e9\n"]}}`, `{"s":{"N":1x}}`} {
		f.Add([]byte(s))
	}
	p := deltaPlanFor(reflect.TypeFor[scanState]())
	f.Fuzz(func(t *testing.T, d []byte) {
		_, inline := p.scanDelta(d, nil)
		if inline && !json.Valid(d) {
			t.Fatalf("%q: walked in place, but it is not valid JSON", d)
		}
		got, err := p.entries(d, nil)
		var doc deltaDoc
		jerr := json.Unmarshal(d, &doc)
		if (err == nil) != (jerr == nil) {
			t.Fatalf("%q: entries error %v, encoding/json error %v", d, err, jerr)
		}
		if err == nil {
			if g, w := describeEntries(got), docEntries(t, p, d); !reflect.DeepEqual(g, w) {
				t.Fatalf("%q:\n got %q\nwant %q", d, g, w)
			}
		}
	})
}
