package checkpointtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// GrowState is the state of GrowGraph: it grows by one log entry per step,
// so a thread of it is mostly deltas (history and retention tests).
type GrowState struct {
	Step int
	Log  []string
}

// GrowGraph runs one node steps times, appending to the log each time.
func GrowGraph(t testing.TB, cp statgraph.Checkpointer, steps int) *statgraph.Graph[GrowState] {
	t.Helper()
	g, err := statgraph.New[GrowState]().
		AddNode("step", func(_ context.Context, s GrowState) (GrowState, error) {
			s.Step++
			s.Log = append(s.Log, fmt.Sprintf("entry %06d done", s.Step))
			return s, nil
		}).
		AddEdge(statgraph.Start, "step").
		AddConditionalEdges("step", func(_ context.Context, s GrowState) string {
			if s.Step >= steps {
				return "end"
			}
			return "again"
		}, map[string]string{"end": statgraph.End, "again": "step"}).
		Compile(statgraph.WithCheckpointer(cp))
	require.NoError(t, err)
	return g
}

// RunGrow runs GrowGraph to its end on thread.
func RunGrow(t testing.TB, cp statgraph.Checkpointer, thread string, steps int) *statgraph.Graph[GrowState] {
	t.Helper()
	g := GrowGraph(t, cp, steps)
	_, err := g.Invoke(context.Background(), GrowState{}, statgraph.WithThread(thread), statgraph.WithStepLimit(steps+5))
	require.NoError(t, err)
	return g
}
