package statgraph

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

type tagName string

type decodeState struct {
	S     string
	B     bool
	I     int
	I8    int8
	U16   uint16
	F     float64
	F32   float32
	Log   []string
	Tags  []tagName
	Nums  []int64
	Bytes []byte
	Meta  map[string]any
	Ptr   *int
	Named string `json:"named,omitempty"`
	Skip  string `json:"-"`
	hide  int
}

// decodeInputs are states as Marshal writes them and hand-written JSON in
// shapes the fast decoder must hand to encoding/json.
var decodeInputs = []string{
	`{}`,
	` { "S" : "a" , "I" : -3 } `,
	`{"S":"x","B":true,"I":7,"I8":-128,"U16":65535,"F":1.5e3,"F32":-0.25,"Log":["a","b c",""],"Tags":["t"],"Nums":[1,-2,9223372036854775807],"Bytes":"aGk=","Meta":{"k":[1,"2"]},"Ptr":5,"named":"n"}`,
	`{"Log":null,"S":null,"I":null,"Tags":[],"Nums":[]}`,
	`{"S":"esc\"aped\n\u00e9","Log":["a\\b","\ud83d\ude00","plain"]}`,
	`{"S":"caf\u00e9 café"}`,
	"{\"S\":\"bad \xff utf8\",\"Log\":[\"\xfe\"]}",
	`{"I":1.0}`, `{"I":1e2}`, `{"I8":128}`, `{"I8":-129}`, `{"U16":-1}`, `{"U16":65536}`,
	`{"I":99999999999999999999}`, `{"F":1e400}`, `{"F32":1e39}`, `{"I":-0}`, `{"I":01}`, `{"I":-}`,
	`{"s":"folded"}`, `{"Named":"go name"}`, `{"Unknown":1,"S":"x"}`, `{"Skip":"x"}`, `{"hide":1}`,
	`{"S":"a","S":"b"}`, `{"Log":["a"],"Log":["b","c"]}`, `{"Meta":{"a":1},"Meta":{"b":2}}`,
	`{"Log":["a",null]}`, `{"Log":["a",1]}`, `{"Log":["a",]}`, `{"Log":[,]}`, `{"Log":["a" "b"]}`,
	`{"S":"x",}`, `{"S":"x"} extra`, `{"S":"x"`, `{"S":"x`, `{"S"}`, `{"S" "x"}`, `[1]`, `null`, ``, `"x"`,
	`{"B":tru}`, `{"B":false}`, `{"B":"true"}`, `{"I":"1"}`, `{"S":1}`, `{"Nums":[1.5]}`, `{"Ptr":null}`,
	`{"Meta":{"a":}}`, `{"Meta":{"a":"\`, `{"Log":["\`, "{\"S\":\"tab\there\"}",
	`{"Nums":[000]}`, `{"Log":[]}`, `{"Log":[""]}`, `{"Nums":[1 2]}`, `{"Log":["a""b"]}`, `{"F":[1.5]}`, `{"Nums":[-0, 0]}`,
}

// TestDecodeFastMatchesEncodingJSON checks that the JSON codec's decoder gives
// what encoding/json gives, value and error, for states it writes and for
// every shape in decodeInputs, and that it takes its own path for the
// states Marshal writes.
func TestDecodeFastMatchesEncodingJSON(t *testing.T) {
	c := newJSONCodec[decodeState]()
	for _, in := range decodeInputs {
		compareDecode(t, c, []byte(in))
	}
	p := deltaPlanFor(reflect.TypeFor[decodeState]())
	for i := range 50 {
		n := i
		s := decodeState{S: fmt.Sprint("s", i), B: i%2 == 0, I: -i * 1000003, I8: int8(i), U16: uint16(i * 1000),
			F: float64(i) / 7, F32: float32(i) / 3, Log: make([]string, i), Nums: []int64{int64(i) << 40, -1},
			Tags: []tagName{"a", tagName(fmt.Sprint(i))}, Named: "é", Ptr: &n}
		for k := range s.Log {
			s.Log[k] = fmt.Sprintf("entry %d \"quoted\" ü", k)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		compareDecode(t, c, b)
		s.Bytes, s.Meta = []byte{1, 2}, map[string]any{"x": 1.0} // decoded by encoding/json inside the fast path
		if b, err = json.Marshal(s); err != nil {
			t.Fatal(err)
		}
		if _, ok := decodeFast[decodeState](p, b); !ok {
			t.Fatalf("the fast decoder gave up on a state Marshal wrote: %s", b)
		}
		compareDecode(t, c, b)
	}
}

func compareDecode(t *testing.T, c Codec[decodeState], in []byte) {
	t.Helper()
	got, gotErr := c.Unmarshal(in)
	var want decodeState
	wantErr := json.Unmarshal(in, &want)
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
		t.Fatalf("%q: error %v, encoding/json gives %v", in, gotErr, wantErr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %+v\nwant %+v", in, got, want)
	}
}

// FuzzDecodeFast compares the JSON codec's decoder with encoding/json on any
// input: go test -fuzz FuzzDecodeFast ./statgraph.
func FuzzDecodeFast(f *testing.F) {
	for _, in := range decodeInputs {
		f.Add([]byte(in))
	}
	c := newJSONCodec[decodeState]()
	f.Fuzz(func(t *testing.T, in []byte) { compareDecode(t, c, in) })
}

// TestDecodeStateAllocations checks that decoding a state with a long
// string slice allocates a handful of times, not once per element as
// encoding/json does.
func TestDecodeStateAllocations(t *testing.T) {
	s := decodeState{S: "x", Log: make([]string, 1000)}
	for i := range s.Log {
		s.Log[i] = fmt.Sprintf("entry %06d done", i)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	c := newJSONCodec[decodeState]()
	allocs := testing.AllocsPerRun(20, func() {
		got, err := c.Unmarshal(b)
		if err != nil || len(got.Log) != 1000 || got.Log[999] != "entry 000999 done" {
			t.Fatalf("decoded %d entries, %v", len(got.Log), err)
		}
	})
	if allocs > 10 {
		t.Fatalf("decoding a 1000-entry state allocates %.0f times, want at most 10", allocs)
	}
}

// TestApplyDeltaDecodesWithoutEncodingJSON checks that a chain of appends
// rebuilds its state with a few allocations per delta.
func TestApplyDeltaAppendsAllocations(t *testing.T) {
	c := newJSONCodec[decodeState]()
	prev := decodeState{Log: []string{"a"}}
	deltas := make([][]byte, 200)
	cur := prev
	for i := range deltas {
		next := cur
		next.Log = append(cur.Log[:len(cur.Log):len(cur.Log)], fmt.Sprintf("entry %d", i), "more")
		next.I = i
		d, ok, err := c.MarshalDelta(cur, next)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		deltas[i], cur = d, next
	}
	allocs := testing.AllocsPerRun(10, func() {
		got, _, err := c.applyDeltas(prev, deltas)
		if err != nil || !reflect.DeepEqual(got, cur) {
			t.Fatalf("applyDeltas gave %+v, %v; want %+v", got, err, cur)
		}
	})
	if allocs > 2*float64(len(deltas)) {
		t.Fatalf("applying %d deltas allocates %.0f times, want at most 2 per delta", len(deltas), allocs)
	}
}
