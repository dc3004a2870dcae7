package sqlite

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	for _, s := range []string{"", "plain", `q"uote`, `back\slash`, "tab\tnl\ncr\r", "\x00\x1f\x7f", "ünïcødé ✓", "bad \xff utf8", "</script>&"} {
		t.Run(s, func(t *testing.T) {
			var got string
			require.NoError(t, json.Unmarshal(appendJSONString(nil, s), &got))
			assert.Equal(t, viaEncodingJSON(t, s), got)
		})
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", `a"b\c`, "\x00\n\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var got string
		require.NoError(t, json.Unmarshal(appendJSONString(nil, s), &got))
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
