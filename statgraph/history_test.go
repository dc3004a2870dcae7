package statgraph_test

import (
	"context"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/checkpointtest"
)

// countingStore counts the reads that reach the store.
type countingStore struct {
	*statgraph.MemoryStore
	gets, ranges atomic.Int64
}

func (s *countingStore) Get(ctx context.Context, thread string, id int64) (*statgraph.Checkpoint, error) {
	s.gets.Add(1)
	return s.MemoryStore.Get(ctx, thread, id)
}

func (s *countingStore) Range(ctx context.Context, thread string, from, to int64, limit int) ([]*statgraph.Checkpoint, error) {
	s.ranges.Add(1)
	return s.MemoryStore.Range(ctx, thread, from, to, limit)
}

func (s *countingStore) reads() int64 { return s.gets.Load() + s.ranges.Load() }

// TestStateReadsItsChainInOneRange: the latest state of a long thread,
// deep in a delta chain, costs one Get and one Range, not one Get per
// ancestor (and again for the counters).
func TestStateReadsItsChainInOneRange(t *testing.T) {
	store := &countingStore{MemoryStore: statgraph.NewMemoryStore(true)}
	g := checkpointtest.RunGrow(t, store, "t", 600)
	latest, err := store.MemoryStore.Get(t.Context(), "t", 0)
	require.NoError(t, err)
	require.True(t, latest.Delta, "the latest checkpoint is a delta")
	require.Less(t, latest.Base, latest.ID-2, "its chain has several rows")

	before := store.reads()
	snap, err := g.State(t.Context(), "t")
	require.NoError(t, err)
	require.Len(t, snap.State.Log, 600)
	require.Equal(t, 600, snap.Counters["step"])
	require.EqualValues(t, 2, store.reads()-before, "store reads for State")

	// A run continuing the thread (here: a new run on the finished thread)
	// loads it the same way.
	before = store.reads()
	_, err = g.UpdateState(t.Context(), "t", checkpointtest.GrowState{Step: 600, Log: snap.State.Log}, "")
	require.NoError(t, err)
	require.EqualValues(t, 2, store.reads()-before, "store reads for UpdateState")
}

// TestHistoryPages lists a thread page by page with History's before cursor and gets
// the same snapshots as one whole History, each page costing two reads.
func TestHistoryPages(t *testing.T) {
	for _, name := range []string{"values", "encoded"} {
		t.Run(name, func(t *testing.T) {
			store := &countingStore{MemoryStore: statgraph.NewMemoryStore(name == "encoded")}
			const steps = 700
			g := checkpointtest.RunGrow(t, store, "t", steps)
			whole, err := g.History(t.Context(), "t", 0, 0)
			require.NoError(t, err)
			require.Len(t, whole, steps+1)
			for i, s := range whole {
				require.Len(t, s.State.Log, s.Step, "snapshot %d", i)
				if i > 0 {
					require.Equal(t, whole[i-1].CheckpointID-1, s.CheckpointID, "newest first")
				}
				require.Equal(t, s.Step, s.Counters["step"], "counters of snapshot %d", i)
			}

			var paged []statgraph.Snapshot[checkpointtest.GrowState]
			before := int64(0)
			for pages := 0; ; pages++ {
				require.Less(t, pages, 100, "paging does not end")
				n := store.reads()
				page, err := g.History(t.Context(), "t", before, 64)
				require.NoError(t, err)
				require.LessOrEqual(t, store.reads()-n, int64(2), "store reads for page %d", pages)
				if len(page) == 0 {
					break
				}
				require.LessOrEqual(t, len(page), 64)
				paged = append(paged, page...)
				before = page[len(page)-1].CheckpointID
			}
			require.Equal(t, len(whole), len(paged))
			for i := range whole {
				require.Equal(t, whole[i], paged[i], "snapshot %d", i)
			}
		})
	}
}

// TestHistoryMatchesState: every snapshot of History equals what State
// said when its checkpoint was the latest.
func TestHistoryMatchesState(t *testing.T) {
	store := statgraph.NewMemoryCheckpointer(true)
	g := checkpointtest.GrowGraph(t, store, 300)
	want := map[int64]statgraph.Snapshot[checkpointtest.GrowState]{}
	for ev, err := range g.Stream(t.Context(), checkpointtest.GrowState{}, statgraph.WithThread("t"), statgraph.WithStepLimit(400)) {
		require.NoError(t, err)
		if ev.Kind == statgraph.EventCheckpoint {
			s, err := g.State(t.Context(), "t")
			require.NoError(t, err)
			want[s.CheckpointID] = s
		}
	}
	hist, err := g.History(t.Context(), "t", 0, 0)
	require.NoError(t, err)
	require.Len(t, hist, len(want))
	for _, s := range hist {
		require.Equal(t, want[s.CheckpointID], s, "checkpoint %d", s.CheckpointID)
	}
}

// TestCheckpointBytesLinear: with a state that grows by one entry per step,
// the bytes stored grow linearly with the steps (four times the steps, at
// most about four times the bytes), not quadratically as with a full state
// every fixed number of steps.
func TestCheckpointBytesLinear(t *testing.T) {
	size := func(steps int) int {
		store := statgraph.NewMemoryCheckpointer(true)
		checkpointtest.RunGrow(t, store, "t", steps)
		list, err := store.Range(t.Context(), "t", 0, 0, 0)
		require.NoError(t, err)
		n := 0
		for _, c := range list {
			n += len(c.State)
		}
		return n
	}
	small, large := size(1000), size(4000)
	t.Logf("state bytes: %d at 1000 steps, %d at 4000", small, large)
	require.Less(t, large, 5*small, "bytes at 4000 steps over bytes at 1000: "+strconv.FormatFloat(float64(large)/float64(small), 'f', 1, 64))
}

// TestReadsRowsWithoutBase: checkpoints written before Base existed (Base
// 0) still load, one Get per ancestor (checkpoint.Prune refuses them:
// statgraph/checkpoint's TestPruneRefusesRowsWithoutBase).
func TestReadsRowsWithoutBase(t *testing.T) {
	store := statgraph.NewMemoryCheckpointer(true)
	g := checkpointtest.RunGrow(t, store, "t", 300)
	want, err := g.History(t.Context(), "t", 0, 0)
	require.NoError(t, err)
	list, err := store.Range(t.Context(), "t", 0, 0, 0)
	require.NoError(t, err)
	for _, c := range list {
		c.Base = 0 // as an older statgraph wrote them
	}
	st, err := g.State(t.Context(), "t")
	require.NoError(t, err)
	require.Equal(t, want[0], st)
	got, err := g.History(t.Context(), "t", 0, 0)
	require.NoError(t, err)
	require.Equal(t, want, got)
}

// TestHistoryOfGrowingThreadIsLinear: listing a thread whose state grows by
// an entry per step allocates in proportion to the steps, as its snapshots
// share the entries they have in common; with a copy of the state per
// snapshot, four times the steps allocated sixteen times the bytes.
func TestHistoryOfGrowingThreadIsLinear(t *testing.T) {
	allocated := func(steps int) uint64 {
		g := checkpointtest.RunGrow(t, statgraph.NewMemoryCheckpointer(true), "t", steps)
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		h, err := g.History(t.Context(), "t", 0, 0)
		runtime.ReadMemStats(&m1)
		require.NoError(t, err)
		require.Len(t, h, steps+1)
		require.Len(t, h[0].State.Log, steps)
		return m1.TotalAlloc - m0.TotalAlloc
	}
	small, large := allocated(1000), allocated(4000)
	require.Less(t, float64(large)/float64(small), 6.0, "History allocated %d bytes for 1,000 steps, %d for 4,000", small, large)
}

// TestHistorySnapshotsShareSafely: History's snapshots of a growing thread
// with a fork in it are the states each checkpoint loads on its own, and
// appending to one snapshot's slice changes no other.
func TestHistorySnapshotsShareSafely(t *testing.T) {
	ctx := t.Context()
	g := checkpointtest.RunGrow(t, statgraph.NewMemoryCheckpointer(true), "t", 300)
	k, err := g.History(ctx, "t", 152, 1) // checkpoint 151, after 150 steps
	require.NoError(t, err)
	edited := k[0].State
	edited.Log = append(slices.Clip(edited.Log), "edited")
	_, err = g.UpdateState(ctx, "t", edited, "", statgraph.FromCheckpoint(k[0].CheckpointID))
	require.NoError(t, err)
	_, err = g.Invoke(ctx, checkpointtest.GrowState{}, statgraph.WithThread("t"), statgraph.WithStepLimit(400))
	require.NoError(t, err)

	whole, err := g.History(ctx, "t", 0, 0)
	require.NoError(t, err)
	require.Len(t, whole, 301+1+150)
	alone := func(id int64) statgraph.Snapshot[checkpointtest.GrowState] { // loaded from its own chain, not the walk
		s, err := g.History(ctx, "t", id+1, 1)
		require.NoError(t, err)
		require.Len(t, s, 1)
		return s[0]
	}
	for _, s := range whole {
		require.Equal(t, alone(s.CheckpointID), s, "checkpoint %d", s.CheckpointID)
	}
	for i := range whole {
		whole[i].State.Log = append(whole[i].State.Log, "appended by the caller")
	}
	for _, s := range whole {
		want := alone(s.CheckpointID)
		require.Equal(t, append(want.State.Log, "appended by the caller"), s.State.Log, "checkpoint %d", s.CheckpointID)
	}
}
