package checkpointtest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// putThread stores checkpoints 1..n of thread, each with Base id-id%10
// (a full checkpoint every ten), and returns nothing on success.
func putThread(t *testing.T, cp statgraph.Checkpointer, thread string, n int) {
	t.Helper()
	for id := int64(1); id <= int64(n); id++ {
		c := Checkpoint(thread, id)
		c.Base = id - id%10
		if c.Base == 0 {
			c.Base = 1
		}
		require.NoError(t, cp.Put(t.Context(), c))
	}
}

func rangeIDs(cps []*statgraph.Checkpoint) []int64 {
	out := make([]int64, len(cps))
	for i, c := range cps {
		out[i] = c.ID
	}
	return out
}

// testRange: Range returns the checkpoints of one thread in [from, to],
// newest first, the newest limit of them, and keeps Base.
func testRange(t *testing.T, cp statgraph.Checkpointer) {
	ctx := context.Background()
	putThread(t, cp, "a", 30)
	putThread(t, cp, "b", 5)
	for _, tc := range []struct {
		from, to int64
		limit    int
		want     []int64
	}{
		{from: 10, to: 13, want: []int64{13, 12, 11, 10}},
		{from: 1, to: 0, limit: 3, want: []int64{30, 29, 28}},      // to 0: up to the latest
		{from: 25, to: 100, want: []int64{30, 29, 28, 27, 26, 25}}, // beyond the latest
		{from: 0, to: 2, want: []int64{2, 1}},                      // from below 1
		{from: 5, to: 20, limit: 2, want: []int64{20, 19}},         // newest of the range
		{from: 14, to: 13, want: []int64{}},                        // empty range
		{from: 31, to: 0, want: []int64{}},                         // after the latest
	} {
		got, err := cp.Range(ctx, "a", tc.from, tc.to, tc.limit)
		require.NoError(t, err)
		require.Equal(t, tc.want, rangeIDs(got), "Range(%d, %d, %d)", tc.from, tc.to, tc.limit)
		for _, c := range got {
			require.Equal(t, "a", c.Thread)
			require.Equal(t, c.ID-c.ID%10+boolID(c.ID < 10), c.Base, "Base of checkpoint %d", c.ID)
		}
	}
	got, err := cp.Range(ctx, "b", 1, 0, 0)
	require.NoError(t, err)
	require.Equal(t, []int64{5, 4, 3, 2, 1}, rangeIDs(got), "another thread's rows")
	got, err = cp.Range(ctx, "none", 1, 0, 0)
	require.NoError(t, err)
	require.Empty(t, got, "a thread without checkpoints")
	one, err := cp.Get(ctx, "a", 17)
	require.NoError(t, err)
	require.EqualValues(t, 10, one.Base, "Get keeps Base")
}

// boolID is 1 for true: checkpoints 1..9 have Base 1.
func boolID(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// testDeleteBefore: Delete with a positive before removes one thread's
// checkpoints below it and nothing else, and reports how many.
func testDeleteBefore(t *testing.T, cp statgraph.Checkpointer) {
	ctx := context.Background()
	putThread(t, cp, "a", 30)
	putThread(t, cp, "b", 5)
	n, err := cp.Delete(ctx, "a", 21)
	require.NoError(t, err)
	require.Equal(t, 20, n)
	got, err := cp.Range(ctx, "a", 1, 0, 0)
	require.NoError(t, err)
	require.Equal(t, []int64{30, 29, 28, 27, 26, 25, 24, 23, 22, 21}, rangeIDs(got))
	_, err = cp.Get(ctx, "a", 20)
	require.ErrorIs(t, err, statgraph.ErrNoCheckpoint)
	n, err = cp.Delete(ctx, "a", 21)
	require.NoError(t, err)
	require.Zero(t, n, "deleting again")
	n, err = cp.Delete(ctx, "none", 5)
	require.NoError(t, err)
	require.Zero(t, n, "a thread without checkpoints")
	n, err = cp.Delete(ctx, "a", 1)
	require.NoError(t, err)
	require.Zero(t, n, "nothing is below the first id")
	got, err = cp.Range(ctx, "b", 0, 0, 0)
	require.NoError(t, err)
	require.Len(t, got, 5, "another thread is untouched")
	require.NoError(t, cp.Put(ctx, Checkpoint("a", 31)), "the thread goes on")
}
