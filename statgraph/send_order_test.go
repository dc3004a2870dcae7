package statgraph_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// Mirrors LangGraph's test_pregel.py test_send_sequences and
// test_concurrent_emit_sends (Send results merged in send order) with the
// map tasks made to finish out of order, as test_pregel_async.py's mappers
// that sleep in proportion to their input do: 200 Send tasks are released
// one at a time in a scrambled order (a different permutation in each of 5
// runs), so that they finish in that order; the merge is in send order
// every time, and the 5 results are the same.
func TestSendMergedInSendOrderWhenTasksFinishScrambled(t *testing.T) {
	const items, runs = 200, 5
	var first st
	for run := range runs {
		order := rand.New(rand.NewPCG(uint64(run), 12)).Perm(items) // order[k]: the item that finishes k-th
		place := make([]int, items)                                 // place[item]: k
		for k, item := range order {
			place[item] = k
		}
		// gates[k] opens when the item finishing k-th may finish.
		gates := make([]chan struct{}, items+1)
		for k := range gates {
			gates[k] = make(chan struct{})
		}
		var mu sync.Mutex
		var finished []int
		var reduced int
		g := mustCompile(t, statgraph.New[st]().SetReducer(appendReducer).
			AddNode("split", func(context.Context, st) (st, error) { return st{}, nil }).
			AddSends("split", func(context.Context, st) []statgraph.Send[st] {
				out := make([]statgraph.Send[st], items)
				for i := range out {
					out[i] = statgraph.Send[st]{To: "map", Input: st{N: i}}
				}
				return out
			}, "map").
			AddNode("map", func(ctx context.Context, s st) (st, error) {
				k := place[s.N]
				select {
				case <-gates[k]:
				case <-ctx.Done():
					return st{}, ctx.Err()
				}
				mu.Lock()
				finished = append(finished, s.N)
				mu.Unlock()
				close(gates[k+1])
				return st{N: 1, Log: []string{strconv.Itoa(s.N)}}, nil
			}).
			AddNode("reduce", func(_ context.Context, s st) (st, error) {
				mu.Lock()
				reduced++
				mu.Unlock()
				return st{Log: []string{"reduced " + strconv.Itoa(s.N)}}, nil
			}).
			AddEdge(statgraph.Start, "split").AddEdge("map", "reduce").AddEdge("reduce", statgraph.End))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		close(gates[0])
		out, err := g.Invoke(ctx, st{})
		cancel()
		require.NoError(t, err)

		require.Equal(t, order, finished, "run %d: the tasks finished in the scrambled order", run)
		require.False(t, slices.IsSorted(finished), "run %d: the finishing order must not be the send order", run)
		require.Len(t, out.Log, items+1)
		for i := range items {
			require.Equal(t, strconv.Itoa(i), out.Log[i], "run %d: update %d is not item %d's: merged out of send order", run, i, i)
		}
		require.Equal(t, "reduced 200", out.Log[items])
		require.Equal(t, items, out.N)
		require.Equal(t, 1, reduced)
		if run == 0 {
			first = out
		} else {
			require.Equal(t, first, out, "run %d differs from run 0", run)
		}
	}
}
