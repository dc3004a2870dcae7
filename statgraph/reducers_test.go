package statgraph_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// TestAppendAmortised: appending one element at a time, as a fan-out's
// merge does, allocates a logarithmic number of times, not once per merge
// (the copy per merge made a wide fan-out quadratic).
func TestAppendAmortised(t *testing.T) {
	start := statgraph.Append(nil, make([]int, 100))
	allocs := testing.AllocsPerRun(5, func() {
		l := start
		for i := range 1000 {
			l = statgraph.Append(l, []int{i})
		}
		require.Len(t, l, 1100)
	})
	require.Less(t, allocs, 100.0, "1,000 one-element Appends")
}

// TestAppendNeverAliases: lists that share a prefix keep their own
// elements, whoever appends to which, and a list Append returns has no
// spare capacity, so the built-in append copies it.
func TestAppendNeverAliases(t *testing.T) {
	base := statgraph.Append(nil, seq(0, 100))
	a := statgraph.Append(base, []int{1000})
	b := statgraph.Append(base, []int{2000}) // base's room is a's now
	a2 := statgraph.Append(a, []int{1001})   // a is the longest: in place
	a3 := statgraph.Append(a, []int{3000})   // a is not any more: a copy
	naive := append(a2, 4000)

	require.Equal(t, seq(0, 100), base)
	require.Equal(t, append(seq(0, 100), 1000), a)
	require.Equal(t, append(seq(0, 100), 2000), b)
	require.Equal(t, append(seq(0, 100), 1000, 1001), a2)
	require.Equal(t, append(seq(0, 100), 1000, 3000), a3)
	require.Equal(t, append(seq(0, 100), 1000, 1001, 4000), naive)
	for _, l := range [][]int{base, a, b, a2, a3} {
		require.Equal(t, len(l), cap(l), "spare capacity")
	}
}

// TestAppendConcurrent: goroutines appending to one list at once each get
// their own element after it (run with -race).
func TestAppendConcurrent(t *testing.T) {
	base := statgraph.Append(nil, seq(0, 100))
	out := make([][]int, 16)
	var wg sync.WaitGroup
	for i := range out {
		wg.Go(func() {
			l := base
			for k := range 50 {
				l = statgraph.Append(l, []int{i*1000 + k})
			}
			out[i] = l
		})
	}
	wg.Wait()
	for i, l := range out {
		require.Equal(t, append(seq(0, 100), seq(i*1000, i*1000+50)...), l, "goroutine %d", i)
	}
	require.Equal(t, seq(0, 100), base)
}

type listState struct{ Items []string }

// TestAppendKeepsCheckpointedStates: NewMemoryCheckpointer(false) keeps states as
// values. A run started from a state a checkpoint holds appends after it
// without touching what the first run appended after the same state.
func TestAppendKeepsCheckpointedStates(t *testing.T) {
	ctx := context.Background()
	noop := func(_ context.Context, s listState) (listState, error) { return listState{}, nil }
	b := statgraph.New[listState]().SetReducer(func(cur, upd listState) listState {
		cur.Items = statgraph.Append(cur.Items, upd.Items)
		return cur
	}).AddNode("hub", noop).AddEdge("hub", statgraph.End)
	// 100 a nodes, then 20 b nodes: the b step's items fit in the room
	// Append left after the a step's, so a run writing there too would
	// overwrite them.
	var as, bs []string
	for i := range 20 {
		bn := fmt.Sprintf("b%03d", i)
		bs = append(bs, bn)
		b.AddNode(bn, func(context.Context, listState) (listState, error) { return listState{Items: []string{bn}}, nil }).
			AddEdge(bn, "hub")
	}
	for i := range 100 {
		a := fmt.Sprintf("a%03d", i)
		as = append(as, a)
		b.AddNode(a, func(context.Context, listState) (listState, error) { return listState{Items: []string{a}}, nil }).
			AddEdge(statgraph.Start, a).AddEdge(a, bs[i%20])
	}
	g, err := b.Compile(statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(false)))
	require.NoError(t, err)

	out1, err := g.Invoke(ctx, listState{}, statgraph.WithThread("t1"))
	require.NoError(t, err)
	require.Equal(t, slices.Concat(as, bs), out1.Items)
	hist, err := g.History(ctx, "t1", 0, 0)
	require.NoError(t, err)
	i := slices.IndexFunc(hist, func(s statgraph.Snapshot[listState]) bool { return len(s.State.Items) == 100 })
	require.GreaterOrEqual(t, i, 0, "the checkpoint after the a step")
	afterA := hist[i].State
	kept := make([][]string, len(hist))
	for k := range hist {
		kept[k] = slices.Clone(hist[k].State.Items)
	}

	out2, err := g.Invoke(ctx, afterA, statgraph.WithThread("t2"))
	require.NoError(t, err)
	require.Equal(t, slices.Concat(as, as, bs), out2.Items)
	require.Equal(t, slices.Concat(as, bs), out1.Items, "t1's result after t2 ran")
	again, err := g.History(ctx, "t1", 0, 0)
	require.NoError(t, err)
	require.Len(t, again, len(kept))
	for k := range kept {
		require.Equal(t, kept[k], again[k].State.Items, "t1's checkpoint %d after t2 ran", again[k].CheckpointID)
	}
	require.Equal(t, as, afterA.Items)
}

func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

type scoreState struct {
	Best int
	Note string
}

// TestMaxAndLastReducers: in a fan-out, the builtin max keeps the largest
// value any branch wrote and Last the non-zero value of the last branch merged
// (branches merge in node-name order), whatever order they finish in.
func TestMaxAndLastReducers(t *testing.T) {
	b := statgraph.New[scoreState]().SetReducer(func(cur, upd scoreState) scoreState {
		cur.Best = max(cur.Best, upd.Best)
		cur.Note = statgraph.Last(cur.Note, upd.Note)
		return cur
	})
	for i, score := range []int{3, 9, 4} {
		name := fmt.Sprintf("n%d", i)
		b.AddNode(name, func(context.Context, scoreState) (scoreState, error) {
			note := ""
			if score != 4 {
				note = name
			}
			return scoreState{Best: score, Note: note}, nil
		}).AddEdge(statgraph.Start, name).AddEdge(name, statgraph.End)
	}
	g, err := b.Compile()
	require.NoError(t, err)
	out, err := g.Invoke(context.Background(), scoreState{Best: 5})
	require.NoError(t, err)
	require.Equal(t, scoreState{Best: 9, Note: "n1"}, out)
}
