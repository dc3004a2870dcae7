package statgraph_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// TestRunOptionsOfAnotherStateType checks that WithResult, which takes the
// state type as a type parameter, refuses a type other than the graph's with an error that names both, from Invoke and from Stream,
// before any node runs.
type other struct{ N int }

func TestRunOptionsOfAnotherStateType(t *testing.T) {
	ran := 0
	g, err := statgraph.New[st]().
		AddNode("a", func(_ context.Context, s st) (st, error) { ran++; return s, nil }).
		AddEdge(statgraph.Start, "a").AddEdge("a", statgraph.End).Compile()
	require.NoError(t, err)
	ctx := context.Background()
	var res statgraph.Result[other]
	for _, tc := range []struct {
		name string
		opt  statgraph.RunOption
		want string
	}{
		{"result", statgraph.WithResult(&res), "WithResult was given a *statgraph.Result[github.com/statgraph/statgraph/statgraph_test.other]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := g.Invoke(ctx, st{}, tc.opt)
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, "graph's state is statgraph_test.st")
			var last statgraph.Event[st]
			var streamErr error
			for ev, err := range g.Stream(ctx, st{}, tc.opt) {
				last, streamErr = ev, err
			}
			require.Equal(t, statgraph.EventRunEnd, last.Kind)
			require.ErrorContains(t, streamErr, tc.want)
			require.Zero(t, ran, "no node runs")
		})
	}
}

// TestStreamWithResultAndResume checks that the run options work on Stream
// as on Invoke: WithResume continues a paused thread, and WithResult is
// filled by the time the loop ends, with the pending interrupts when the
// run paused (LangGraph's result "__interrupt__").
func TestStreamWithResultAndResume(t *testing.T) {
	g, err := statgraph.New[st]().
		AddNode("ask", func(ctx context.Context, s st) (st, error) {
			v, err := statgraph.Interrupt[string](ctx, "ok?")
			if err != nil {
				return s, err
			}
			s.Log = append(s.Log, v)
			return s, nil
		}).
		AddEdge(statgraph.Start, "ask").AddEdge("ask", statgraph.End).
		Compile(statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(false)))
	require.NoError(t, err)
	ctx := context.Background()
	var paused statgraph.Result[st]
	for _, err := range g.Stream(ctx, st{Log: []string{"in"}}, statgraph.WithThread("t"), statgraph.WithResult(&paused)) {
		if err != nil {
			require.ErrorIs(t, err, statgraph.ErrInterrupted)
		}
	}
	require.Len(t, paused.Interrupts, 1, "the pause is reported")
	require.Equal(t, "ask", paused.Interrupts[0].Node)
	require.JSONEq(t, `"ok?"`, string(paused.Interrupts[0].Payload))

	var res statgraph.Result[st]
	var streamErr error
	for _, err := range g.Stream(ctx, st{Log: []string{"ignored"}}, statgraph.WithThread("t"), statgraph.WithResume("yes"), statgraph.WithResult(&res)) {
		streamErr = err
	}
	require.NoError(t, streamErr)
	require.Equal(t, []string{"in", "yes"}, res.State.Log, "the input given with WithResume is ignored")
	require.Empty(t, res.Interrupts, "a run that finished has no pending interrupts")
}
