package statgraph_test

import (
	"context"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// twoFanOut builds Start -> split, which sends items tasks to "slow" and
// as many to "fast", interleaved; each task notes itself in its node's
// inFlight and appends its item.
func twoFanOut(items int, slow, fast *inFlight) *statgraph.Builder[st] {
	task := func(f *inFlight, prefix string) func(context.Context, st) (st, error) {
		return func(_ context.Context, s st) (st, error) {
			f.enter()
			return st{N: 1, Log: []string{prefix + strconv.Itoa(s.N)}}, nil
		}
	}
	return statgraph.New[st]().SetReducer(appendReducer).
		AddNode("split", func(context.Context, st) (st, error) { return st{}, nil }).
		AddSends("split", func(context.Context, st) []statgraph.Send[st] {
			var out []statgraph.Send[st]
			for i := range items {
				out = append(out, statgraph.Send[st]{To: "slow", Input: st{N: i}}, statgraph.Send[st]{To: "fast", Input: st{N: i}})
			}
			return out
		}, "slow", "fast").
		AddNode("slow", task(slow, "s")).AddNode("fast", task(fast, "f")).
		AddEdge(statgraph.Start, "split").AddEdge("slow", statgraph.End).AddEdge("fast", statgraph.End)
}

// TestMaxConcurrencyPerNode: WithMaxConcurrency(4, "slow") runs at most 4
// of slow's tasks at once while fast's run beside them unbounded, starts
// no goroutine per waiting task, and merges in send order; a step bound
// given too bounds both together.
func TestMaxConcurrencyPerNode(t *testing.T) {
	before := runtime.NumGoroutine()
	var slow, fast inFlight
	g := mustCompile(t, twoFanOut(200, &slow, &fast))
	out, err := g.Invoke(context.Background(), st{}, statgraph.WithMaxConcurrency(4, "slow"))
	require.NoError(t, err)
	require.Equal(t, 400, out.N)
	for i := range 200 {
		require.Equal(t, []string{"s" + strconv.Itoa(i), "f" + strconv.Itoa(i)}, out.Log[2*i:2*i+2], "send order")
	}
	require.LessOrEqual(t, slow.peak.Load(), int64(4), "slow's tasks at once")
	require.Greater(t, slow.peak.Load(), int64(1), "slow's tasks still run in parallel")
	require.Greater(t, fast.peak.Load(), int64(4), "fast's tasks are not bound by slow's bound")
	require.Less(t, slow.goroutines.Load(), int64(before+200+50), "goroutines: one per fast task and 4 for slow's")

	var slow2, fast2 inFlight
	g = mustCompile(t, twoFanOut(100, &slow2, &fast2))
	_, err = g.Invoke(context.Background(), st{}, statgraph.WithMaxConcurrency(2, "slow"), statgraph.WithMaxConcurrency(6))
	require.NoError(t, err)
	require.LessOrEqual(t, slow2.peak.Load(), int64(2), "slow's tasks at once under both bounds")
	require.LessOrEqual(t, slow2.peak.Load()+fast2.peak.Load(), int64(6+2), "the step's bound")
	require.Less(t, fast2.goroutines.Load(), int64(before+30), "goroutines under a step bound of 6")
}

// TestMaxConcurrencyUnknownNode: a bound naming no node of the graph fails
// the run before it starts, naming the graph's nodes.
func TestMaxConcurrencyUnknownNode(t *testing.T) {
	var f inFlight
	g := mustCompile(t, fanOut(3, &f))
	_, err := g.Invoke(context.Background(), st{}, statgraph.WithMaxConcurrency(2, "mapp"))
	require.EqualError(t, err, `statgraph: WithMaxConcurrency(2, "mapp"): the graph has no node "mapp"; its nodes are map, split`)
	require.Zero(t, f.peak.Load())
}

// TestMaxConcurrencyPerNodeWithFailureAndResume mirrors
// test_send_dedupe_on_resume under a per-node bound: the finished tasks'
// writes are kept and only the failed ones run again.
func TestMaxConcurrencyPerNodeWithFailureAndResume(t *testing.T) {
	savers(t, func(t *testing.T, cp statgraph.Checkpointer) {
		var calls counter
		fail := map[int]bool{3: true, 11: true}
		g := mustCompile(t, mapReduce(15, &calls, fail), statgraph.WithCheckpointer(cp))
		ctx := context.Background()
		_, err := g.Invoke(ctx, st{}, statgraph.WithThread("n"), statgraph.WithMaxConcurrency(2, "map"))
		require.ErrorContains(t, err, "failed")
		clear(fail)
		out, err := g.Invoke(ctx, st{}, statgraph.WithThread("n"), statgraph.WithMaxConcurrency(2, "map"))
		require.NoError(t, err)
		for i := range 15 {
			want := 1
			if i == 3 || i == 11 {
				want = 2
			}
			require.Equal(t, want, calls.get("map:"+strconv.Itoa(i)), "item %d", i)
		}
		require.Equal(t, "reduced 15", out.Log[15])
	})
}
