package checkpoint_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint"
	"github.com/statgraph/statgraph/statgraph/checkpoint/checkpointtest"
)

// TestPrune keeps the last checkpoints of a finished thread (and the rows
// they are rebuilt from), deletes the rest, and leaves every remaining
// snapshot loadable and equal to what it was.
func TestPrune(t *testing.T) {
	for _, name := range []string{"values", "encoded"} {
		t.Run(name, func(t *testing.T) {
			store := statgraph.NewMemoryCheckpointer(name == "encoded")
			g := checkpointtest.RunGrow(t, store, "t", 500)
			whole, err := g.History(t.Context(), "t", 0, 0)
			require.NoError(t, err)
			byID := map[int64]statgraph.Snapshot[checkpointtest.GrowState]{}
			for _, s := range whole {
				byID[s.CheckpointID] = s
			}
			left := len(whole)
			for _, keep := range []int{50, 1} {
				n, err := checkpoint.Prune(t.Context(), store, "t", keep)
				require.NoError(t, err)
				rest, err := g.History(t.Context(), "t", 0, 0)
				require.NoError(t, err)
				require.GreaterOrEqual(t, len(rest), keep)
				require.Equal(t, left-n, len(rest), "checkpoints left after keeping %d", keep)
				require.Less(t, len(rest), len(whole)/2, "keep %d deleted too little", keep)
				left = len(rest)
				for _, s := range rest {
					require.Equal(t, byID[s.CheckpointID], s, "checkpoint %d after keeping %d", s.CheckpointID, keep)
				}
				st, err := g.State(t.Context(), "t")
				require.NoError(t, err)
				require.Equal(t, whole[0], st)
			}
			// The thread goes on.
			_, err = g.UpdateState(t.Context(), "t", checkpointtest.GrowState{Step: 1}, "")
			require.NoError(t, err)
		})
	}
}

// TestPruneRefusesUnfinished: a thread that would resume keeps everything.
func TestPruneRefusesUnfinished(t *testing.T) {
	store := statgraph.NewMemoryCheckpointer(true)
	g := checkpointtest.GrowGraph(t, store, 100)
	_, err := g.Invoke(t.Context(), checkpointtest.GrowState{}, statgraph.WithThread("t"), statgraph.WithStepLimit(50))
	require.Error(t, err, "the step limit stops the run")
	before, err := store.Range(t.Context(), "t", 0, 0, 0)
	require.NoError(t, err)
	_, err = checkpoint.Prune(t.Context(), store, "t", 1)
	require.ErrorContains(t, err, "has not finished")
	after, err := store.Range(t.Context(), "t", 0, 0, 0)
	require.NoError(t, err)
	require.Len(t, after, len(before))
	_, err = checkpoint.Prune(t.Context(), store, "t", 0)
	require.ErrorContains(t, err, "keep at least")
}

// TestPruneRefusesRowsWithoutBase: checkpoints written before
// Checkpoint.Base existed (Base 0) do not say which rows they are rebuilt
// from, so Prune deletes none of them.
func TestPruneRefusesRowsWithoutBase(t *testing.T) {
	store := statgraph.NewMemoryCheckpointer(true)
	checkpointtest.RunGrow(t, store, "t", 300)
	list, err := store.Range(t.Context(), "t", 0, 0, 0)
	require.NoError(t, err)
	for _, c := range list {
		c.Base = 0 // as an older statgraph wrote them
	}
	_, err = checkpoint.Prune(t.Context(), store, "t", 1)
	require.ErrorContains(t, err, "older statgraph")
	after, err := store.Range(t.Context(), "t", 0, 0, 0)
	require.NoError(t, err)
	require.Len(t, after, len(list))
}
