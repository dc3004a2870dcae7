package sqlite

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/internal/rowenc"
)

// FuzzDecodeRow feeds rows of arbitrary column values, as a damaged or
// hand-edited file could hold, to decodeRow: it either decodes them or
// reports a corrupt checkpoint, and never panics.
func FuzzDecodeRow(f *testing.F) {
	f.Add(uint16(0), int64(1), 1.5, "text", []byte(`["a"]`))
	f.Add(uint16(0x2aaa), int64(-1), 0.0, `{"a":1}`, []byte{0xff})
	f.Add(uint16(0xffff), int64(1)<<40, -2.5, `[{"n":"a","u":"AAE="}]`, []byte(`{"i":"dHJ1ZQ=="}`))
	s := &Store{path: "fuzz.db"}
	f.Fuzz(func(t *testing.T, kinds uint16, n int64, r float64, text string, blob []byte) {
		var vals [numColumns]any
		vals[colKey] = n
		for col := colParent; col < numColumns; col++ {
			// Two bits of kinds per column choose one of SQLite's types.
			switch kinds >> (2 * (col % 8)) & 3 {
			case 0:
				vals[col] = n
			case 1:
				vals[col] = text
			case 2:
				vals[col] = blob
			default:
				if col%2 == 0 {
					vals[col] = r
				}
			}
		}
		cp := &statgraph.Checkpoint{}
		if err := s.decodeRow("t", &vals, &rowenc.Decoder{}, cp); err != nil {
			require.ErrorIs(t, err, statgraph.ErrCorruptCheckpoint)
			require.ErrorContains(t, err, `thread "t" checkpoint`)
			return
		}
		require.Equal(t, "t", cp.Thread)
		require.Equal(t, n&maxID, cp.ID)
	})
}
