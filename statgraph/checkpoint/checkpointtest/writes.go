package checkpointtest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// testPutWrites checks PutWrites: writes stored concurrently against one
// checkpoint all come back with it (from Get and Range), after the
// pending writes it was stored with and without changing its other fields
// or other checkpoints; a missing checkpoint is ErrNoCheckpoint.
func testPutWrites(t *testing.T, s statgraph.Checkpointer) {
	ctx := context.Background()
	one, two := Checkpoint("w", 1), Checkpoint("w", 2)
	two.Pending = nil
	require.NoError(t, s.Put(ctx, one))
	require.NoError(t, s.Put(ctx, two))

	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			errs[i] = s.PutWrites(ctx, "w", 2, []statgraph.PendingWrite{
				{Node: fmt.Sprintf("__sent__:%d", i), Update: []byte{byte(i), 0, 255, '"', ','}},
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "PutWrites %d", i)
	}
	require.NoError(t, s.PutWrites(ctx, "w", 1, []statgraph.PendingWrite{
		{Node: "c", Update: []byte(`{"y":2}`)}, {Node: "__goto__:c", Update: []byte(`["a"]`)},
	}))

	// Checkpoint 2: the n writes in some order, nothing else changed.
	got, err := s.Get(ctx, "w", 2)
	require.NoError(t, err)
	require.Len(t, got.Pending, n)
	slices.SortFunc(got.Pending, func(a, b statgraph.PendingWrite) int { return int(a.Update[0]) - int(b.Update[0]) })
	want := *two
	for i := range n {
		want.Pending = append(want.Pending, statgraph.PendingWrite{Node: fmt.Sprintf("__sent__:%d", i), Update: []byte{byte(i), 0, 255, '"', ','}})
	}
	Same(t, &want, got)

	// Checkpoint 1: its own pending writes first, then the new ones.
	wantOne := *one
	wantOne.Pending = append(slices.Clone(one.Pending),
		statgraph.PendingWrite{Node: "c", Update: []byte(`{"y":2}`)}, statgraph.PendingWrite{Node: "__goto__:c", Update: []byte(`["a"]`)})
	for _, read := range []func() ([]*statgraph.Checkpoint, error){
		func() ([]*statgraph.Checkpoint, error) {
			c, err := s.Get(ctx, "w", 1)
			return []*statgraph.Checkpoint{c}, err
		},
		func() ([]*statgraph.Checkpoint, error) { return s.Range(ctx, "w", 1, 1, 0) },
		func() ([]*statgraph.Checkpoint, error) { l, err := s.Range(ctx, "w", 0, 0, 0); return l[1:], err },
	} {
		cps, err := read()
		require.NoError(t, err)
		require.Len(t, cps, 1)
		Same(t, &wantOne, cps[0])
	}

	w := []statgraph.PendingWrite{{Node: "a", Update: []byte(`1`)}}
	assert.ErrorIs(t, s.PutWrites(ctx, "w", 3, w), statgraph.ErrNoCheckpoint, "checkpoint 3 does not exist")
	assert.ErrorIs(t, s.PutWrites(ctx, "nobody", 1, w), statgraph.ErrNoCheckpoint, "thread nobody does not exist")
}
