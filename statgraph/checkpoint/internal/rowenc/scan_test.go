package rowenc

import (
	"reflect"
	"testing"

	"github.com/statgraph/statgraph/statgraph"
)

var nextInputs = []string{`[]`, `["a"]`, `["a","b c","ü"]`, `[ "a" ]`, `["a\"b"]`, `["a",]`, `[,]`, `["a" "b"]`,
	`["a",1]`, `[null]`, `null`, `["a"`, `["a]`, "[\"\xff\"]", "[\"a\tb\"]", `{}`, ``, `["a"]x`}

var counterInputs = []string{`{}`, `{"a":1}`, `{"a":1,"b":-20,"c":0}`, `{"a":1,"a":2}`, `{"a":-0}`, `{"a":01}`,
	`{"a":1.0}`, `{"a":1e2}`, `{"a":99999999999999999999}`, `{"a":4611686018427387904}`, `{"a\"":1}`, `{ "a":1}`,
	`{"a":}`, `{"a":1,}`, `{"a"1}`, `{"a":-}`, `[]`, `null`, `{"a":"1"}`, "{\"\xff\":1}", `{"a":1}x`}

// decodeWithJSON is what Decode gave before it had its own scanners.
func decodeWithJSON(raw Raw) (*statgraph.Checkpoint, error) {
	cp := &statgraph.Checkpoint{}
	if err := unmarshal("next", raw.Next, &cp.Next); err != nil {
		return nil, err
	}
	if err := unmarshal("counters", raw.Counters, &cp.Counters); err != nil {
		return nil, err
	}
	return cp, nil
}

func compareRow(t *testing.T, d *Decoder, raw Raw) {
	t.Helper()
	want, wantErr := decodeWithJSON(raw)
	got := &statgraph.Checkpoint{}
	err := d.Decode(got, raw)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("next %q counters %q: error %v, encoding/json gives %v", raw.Next, raw.Counters, err, wantErr)
	}
	if err == nil && (!reflect.DeepEqual(got.Next, want.Next) || !reflect.DeepEqual(got.Counters, want.Counters)) {
		t.Fatalf("next %q counters %q: got %#v %#v, encoding/json gives %#v %#v", raw.Next, raw.Counters, got.Next, got.Counters, want.Next, want.Counters)
	}
}

// TestDecoderMatchesEncodingJSON checks that Decoder reads the next and
// counters columns as encoding/json does, value and error, for what Encode
// writes and for malformed text, also when a row repeats the one before.
func TestDecoderMatchesEncodingJSON(t *testing.T) {
	var d Decoder
	for _, n := range nextInputs {
		for _, c := range counterInputs {
			compareRow(t, &d, Raw{Next: []byte(n), Counters: []byte(c)})
			compareRow(t, &d, Raw{Next: []byte(n), Counters: []byte(c)})
		}
	}
	for _, next := range [][]string{{"a"}, {"b", `q"uote`, "ü"}, {"a"}} {
		cols, err := Encode(&statgraph.Checkpoint{Next: next, Counters: map[string]int{"a": 3, "b\n": -1, "c": 1 << 40}})
		if err != nil {
			t.Fatal(err)
		}
		compareRow(t, &d, Raw{Next: []byte(cols.Next), Counters: []byte(cols.Counters)})
	}
}

func FuzzDecoder(f *testing.F) {
	for i, n := range nextInputs {
		f.Add([]byte(n), []byte(counterInputs[i]))
	}
	f.Fuzz(func(t *testing.T, next, counters []byte) {
		var d Decoder
		compareRow(t, &d, Raw{Next: next, Counters: counters})
	})
}

// TestDecoderAllocations checks that a run of rows with the same frontier
// shares one Next slice and decodes with one allocation per row (the
// checkpoint's), where encoding/json took about ten.
func TestDecoderAllocations(t *testing.T) {
	cols, err := Encode(&statgraph.Checkpoint{Next: []string{"step"}})
	if err != nil {
		t.Fatal(err)
	}
	raw := Raw{Next: []byte(cols.Next)}
	var d Decoder
	first := &statgraph.Checkpoint{}
	if err := d.Decode(first, raw); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		cp := &statgraph.Checkpoint{}
		if err := d.Decode(cp, raw); err != nil || &cp.Next[0] != &first.Next[0] {
			t.Fatalf("Next %v (%v) is not shared with the row before", cp.Next, err)
		}
	})
	if allocs > 1 {
		t.Fatalf("decoding a row allocates %.0f times, want at most 1", allocs)
	}
}

// TestDecoderCountersAllocations checks that a row with counters costs the
// checkpoint and the map, its keys shared with earlier rows.
func TestDecoderCountersAllocations(t *testing.T) {
	var d Decoder
	raw := func(n int) Raw {
		cols, err := Encode(&statgraph.Checkpoint{Next: []string{"step"}, Counters: map[string]int{"step": n}})
		if err != nil {
			t.Fatal(err)
		}
		return Raw{Next: []byte(cols.Next), Counters: []byte(cols.Counters)}
	}
	rows := []Raw{raw(1), raw(2)}
	n := 0
	allocs := testing.AllocsPerRun(100, func() {
		cp := &statgraph.Checkpoint{}
		if err := d.Decode(cp, rows[n%2]); err != nil || cp.Counters["step"] != 1+n%2 {
			t.Fatalf("counters %v (%v), want step %d", cp.Counters, err, 1+n%2)
		}
		n++
	})
	if allocs > 3 {
		t.Fatalf("decoding a row with counters allocates %.0f times, want at most 3", allocs)
	}
}
