package statgraph_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// An abandoned attempt keeps running after its WithTimeout deadline, while
// the engine goes on with the node's next attempt in the same slot: it
// must see its own attempt's Runtime (not the retry's), and what it writes
// late must reach no stream. Before, the attempt read and wrote the slot's
// info the engine was reusing: a data race under -race, Attempt 2 read by
// attempt 1, and its late custom value could be delivered.
func TestAbandonedAttemptKeepsItsOwnRuntime(t *testing.T) {
	release := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	var lateAttempt int
	b := statgraph.New[st]().
		AddNode("slow", func(ctx context.Context, s st) (st, error) {
			rt := statgraph.RuntimeOf(ctx)
			if rt.Attempt > 1 {
				close(release) // the retry runs: attempt 1 was abandoned
				return st{N: 7}, nil
			}
			defer wg.Done()
			<-release // ignores its ctx until the engine reuses the slot
			late := statgraph.RuntimeOf(ctx)
			lateAttempt = late.Attempt
			late.Write("late")
			return st{N: 1}, nil
		}, statgraph.WithTimeout(5*time.Millisecond),
			statgraph.WithRetry(statgraph.RetryPolicy{MaxAttempts: 2, InitialInterval: time.Millisecond})).
		AddEdge(statgraph.Start, "slow").AddEdge("slow", statgraph.End)
	g := mustCompile(t, b)
	var custom []any
	var out st
	for ev, err := range g.Stream(context.Background(), st{}, statgraph.WithEvents(statgraph.EventCustom, statgraph.EventRunEnd)) {
		require.NoError(t, err)
		switch ev.Kind {
		case statgraph.EventCustom:
			custom = append(custom, ev.Custom)
		case statgraph.EventRunEnd:
			out = ev.State
		}
	}
	wg.Wait()
	require.Equal(t, 7, out.N, "the retry's result")
	require.Equal(t, 1, lateAttempt, "the abandoned attempt sees its own Runtime")
	require.Empty(t, custom, "nothing written by an abandoned attempt is streamed")
}
