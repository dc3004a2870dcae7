package rowenc

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// viaEncodingJSON is what encoding/json makes of s after a round trip.
func viaEncodingJSON(t *testing.T, s string) string {
	b, err := json.Marshal(s)
	require.NoError(t, err)
	var out string
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote`, `back\slash`, "tab\tnl\ncr\r", "\x00\x1f\x7f", "ünïcødé ✓", "bad \xff utf8", "cut \xe2\x9c", "</script>&"} {
		t.Run(s, func(t *testing.T) {
			enc := appendJSONString(nil, s)
			assert.True(t, utf8.Valid(enc), "%q is not valid UTF-8", enc)
			var got string
			require.NoError(t, json.Unmarshal(enc, &got))
			assert.Equal(t, viaEncodingJSON(t, s), got)
		})
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", `a"b\c`, "\x00\n\xff", "\xe2\x9c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := appendJSONString(nil, s)
		require.True(t, utf8.Valid(enc), "%q is not valid UTF-8", enc)
		var got string
		require.NoError(t, json.Unmarshal(enc, &got))
		assert.Equal(t, viaEncodingJSON(t, s), got)
	})
}

func TestNextAndCountersJSON(t *testing.T) {
	var next []string
	require.NoError(t, json.Unmarshal([]byte(nextJSON([]string{"a", `b"`, "c\n"})), &next))
	assert.Equal(t, []string{"a", `b"`, "c\n"}, next)

	var counters map[string]int
	want := map[string]int{"a": 1, "b\\": -2, "c": 1 << 40}
	require.NoError(t, json.Unmarshal([]byte(countersJSON(want)), &counters))
	assert.Equal(t, want, counters)
}

func TestEncodeDecode(t *testing.T) {
	cp := &statgraph.Checkpoint{
		Next:       []string{"a", "b"},
		Pending:    []statgraph.PendingWrite{{Node: "a", Update: []byte{0, 255}, Value: 1}},
		Counters:   map[string]int{"a": 2},
		Interrupts: []statgraph.Interruption{{ID: "i", Node: "a", When: "inside", Payload: []byte(`"?"`)}},
		Resumes:    map[string][]byte{"i": []byte("true")},
	}
	cols, err := Encode(cp)
	require.NoError(t, err)
	var got statgraph.Checkpoint
	require.NoError(t, Decode(&got, Raw{[]byte(cols.Next), []byte(cols.Pending), []byte(cols.Counters), []byte(cols.Interrupts), []byte(cols.Resumes)}))
	want := *cp
	want.Pending = []statgraph.PendingWrite{{Node: "a", Update: []byte{0, 255}}}
	assert.Equal(t, want, got)

	cols, err = Encode(&statgraph.Checkpoint{Next: []string{}})
	require.NoError(t, err)
	assert.Equal(t, Columns{}, cols, "empty collections are NULL")
	got = statgraph.Checkpoint{}
	require.NoError(t, Decode(&got, Raw{}))
	assert.Equal(t, statgraph.Checkpoint{}, got)

	err = Decode(&got, Raw{Counters: []byte(`["a"]`)})
	assert.ErrorContains(t, err, "column counters holds invalid JSON")
}

// FuzzDecode feeds arbitrary column text, as a damaged or hand-edited row
// could hold, to Decode: it decodes or names the column, and never panics.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`["a"]`), []byte(`[{"n":"a","u":"AAE="}]`), []byte(`{"a":1}`), []byte(`[{"i":"x","n":"a","w":"inside"}]`), []byte(`{"i":"dHJ1ZQ=="}`))
	f.Add([]byte(`{}`), []byte(`[`), []byte(`["a"]`), []byte(`null`), []byte{0xff})
	f.Fuzz(func(t *testing.T, next, pending, counters, interrupts, resumes []byte) {
		var cp statgraph.Checkpoint
		err := Decode(&cp, Raw{next, pending, counters, interrupts, resumes})
		if err != nil {
			require.Regexp(t, `^column (next|pending|counters|interrupts|resumes) holds invalid JSON: `, err.Error())
		}
	})
}
