package postgres

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph/checkpoint/checkpointtest"
)

func TestRange(t *testing.T) {
	s, _, _ := openTest(t)
	ctx := t.Context()
	for id := int64(1); id <= 10; id++ {
		require.NoError(t, s.Put(ctx, checkpointtest.Checkpoint("t", id)))
		require.NoError(t, s.Put(ctx, checkpointtest.Checkpoint("u", id)))
	}
	tests := []struct {
		from, to int64
		limit    int
		want     []int64
	}{
		{1, 0, 0, []int64{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}},
		{3, 5, 0, []int64{5, 4, 3}},
		{3, 5, 2, []int64{5, 4}},
		{0, 2, 0, []int64{2, 1}},
		{8, 0, 0, []int64{10, 9, 8}},
		{4, 4, 0, []int64{4}},
		{6, 5, 0, nil},
		{11, 0, 0, nil},
		{1, 0, 3, []int64{10, 9, 8}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d..%d limit %d", tt.from, tt.to, tt.limit), func(t *testing.T) {
			cps, err := s.Range(ctx, "t", tt.from, tt.to, tt.limit)
			require.NoError(t, err)
			var ids []int64
			for _, cp := range cps {
				assert.Equal(t, "t", cp.Thread)
				checkpointtest.Same(t, checkpointtest.Checkpoint("t", cp.ID), cp)
				ids = append(ids, cp.ID)
			}
			assert.Equal(t, tt.want, ids)
		})
	}
	cps, err := s.Range(ctx, "nope", 1, 0, 0)
	require.NoError(t, err)
	assert.Empty(t, cps)
}

func TestDeleteBefore(t *testing.T) {
	s, _, _ := openTest(t)
	ctx := t.Context()
	for id := int64(1); id <= 10; id++ {
		require.NoError(t, s.Put(ctx, checkpointtest.Checkpoint("t", id)))
		require.NoError(t, s.Put(ctx, checkpointtest.Checkpoint("u", id)))
	}
	n, err := s.DeleteBefore(ctx, "t", 7)
	require.NoError(t, err)
	assert.Equal(t, 6, n)
	cps, err := s.List(ctx, "t", 0)
	require.NoError(t, err)
	assert.Len(t, cps, 4)
	assert.Equal(t, int64(7), cps[3].ID)
	n, err = s.DeleteBefore(ctx, "t", 7)
	require.NoError(t, err)
	assert.Zero(t, n, "nothing left below 7")
	n, err = s.DeleteBefore(ctx, "nope", 7)
	require.NoError(t, err)
	assert.Zero(t, n)
	cps, err = s.List(ctx, "u", 0)
	require.NoError(t, err)
	assert.Len(t, cps, 10, "other threads are kept")
}
