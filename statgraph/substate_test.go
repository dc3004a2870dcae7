package statgraph_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

type outerSt struct {
	Topics []string
	Notes  []string
}

type midSt struct {
	Topic string
	Note  string
}

type innerSt struct {
	Topic, Answer string
}

// nestedGraphs returns a parent that sends each topic to a subgraph node
// "mid", whose child runs a subgraph node "inner" that asks a person about
// the topic with Interrupt: two levels of subgraphs, and Send tasks to one.
func nestedGraphs(t *testing.T) *statgraph.Graph[outerSt] {
	t.Helper()
	inner, err := statgraph.New[innerSt]().
		AddNode("ask", func(ctx context.Context, s innerSt) (innerSt, error) {
			a, err := statgraph.Interrupt[string](ctx, "about "+s.Topic+"?")
			if err != nil {
				return s, err
			}
			s.Answer = a
			return s, nil
		}).
		AddEdge(statgraph.Start, "ask").AddEdge("ask", statgraph.End).Compile()
	require.NoError(t, err)
	mid, err := statgraph.AddSubgraph(statgraph.New[midSt](), "inner", inner,
		func(m midSt) innerSt { return innerSt{Topic: m.Topic} },
		func(m midSt, i innerSt) midSt { m.Note = m.Topic + ": " + i.Answer; return m }).
		AddEdge(statgraph.Start, "inner").AddEdge("inner", statgraph.End).Compile()
	require.NoError(t, err)
	b := statgraph.New[outerSt]().SetReducer(func(cur, u outerSt) outerSt {
		return outerSt{Topics: statgraph.Append(cur.Topics, u.Topics), Notes: statgraph.Append(cur.Notes, u.Notes)}
	})
	b.AddNode("plan", func(_ context.Context, s outerSt) (outerSt, error) { return outerSt{}, nil })
	statgraph.AddSubgraph(b, "mid", mid,
		func(o outerSt) midSt { return midSt{Topic: o.Topics[len(o.Topics)-1]} },
		func(_ outerSt, m midSt) outerSt { return outerSt{Notes: []string{m.Note}} })
	g, err := b.AddEdge(statgraph.Start, "plan").
		AddSends("plan", func(_ context.Context, s outerSt) []statgraph.Send[outerSt] {
			var out []statgraph.Send[outerSt]
			for _, topic := range s.Topics {
				out = append(out, statgraph.Send[outerSt]{To: "mid", Input: outerSt{Topics: []string{topic}}})
			}
			return out
		}, "mid").
		AddEdge("mid", statgraph.End).
		Compile(statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(false)))
	require.NoError(t, err)
	return g
}

// TestStateIncludesSubgraphs checks that the parent's State holds the
// snapshots of its subgraph nodes' child runs, two levels deep and per Send
// task, with their threads, states and pending interrupts, without the
// caller building a child thread's name (LangGraph's
// get_state(config, subgraphs=True), test_get_state_with_subgraphs); and
// that after the run, and on the thread's next turn, they are the latest
// child runs.
func TestStateIncludesSubgraphs(t *testing.T) {
	ctx := context.Background()
	g := nestedGraphs(t)
	_, err := g.Invoke(ctx, outerSt{Topics: []string{"apples", "pears"}}, statgraph.WithThread("t"))
	require.ErrorIs(t, err, statgraph.ErrInterrupted)

	snap, err := g.State(ctx, "t")
	require.NoError(t, err)
	require.Equal(t, "t", snap.Thread)
	require.Equal(t, []string{"mid", "mid"}, snap.Next)
	require.Len(t, snap.Subgraphs, 2, "one child per Send task to mid")
	for task, want := range map[string]string{"mid": "apples", "mid[1]": "pears"} {
		child, ok := snap.Subgraphs[task]
		require.True(t, ok, "Subgraphs has %q: %v", task, snap.Subgraphs)
		require.Equal(t, midSt{Topic: want}, child.State)
		require.Equal(t, []string{"inner"}, child.Next)
		require.Len(t, child.Interrupts, 1)
		grand, ok := child.Subgraphs["inner"]
		require.True(t, ok, "the child's own subgraph is read: %+v", child)
		require.Equal(t, innerSt{Topic: want}, grand.State)
		require.Equal(t, []string{"ask"}, grand.Next)
		require.Equal(t, `"about `+want+`?"`, string(grand.Interrupts[0].Payload))
		require.Equal(t, child.Thread+"|inner:0", grand.Thread)
		// The thread listed is the one the child graph reads.
		require.Contains(t, []string{"t|mid:0", "t|mid:1"}, child.Thread)
	}
	require.NotEqual(t, snap.Subgraphs["mid"].Thread, snap.Subgraphs["mid[1]"].Thread)

	ids := map[string]any{}
	for _, in := range snap.Interrupts {
		ids[in.ID] = "yes"
	}
	out, err := g.Resume(ctx, statgraph.ResumeMap(ids), statgraph.WithThread("t"))
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"apples: yes", "pears: yes"}, out.Notes)

	snap, err = g.State(ctx, "t")
	require.NoError(t, err)
	require.Empty(t, snap.Next)
	last := snap.Subgraphs["mid"]
	require.Empty(t, last.Next, "the last run of mid finished")
	require.Equal(t, "t|mid:1", last.Thread)
	require.Equal(t, "pears: yes", last.State.(midSt).Note)
	require.Equal(t, "yes", last.Subgraphs["inner"].State.(innerSt).Answer)

	_, err = g.Invoke(ctx, outerSt{Topics: []string{"plums"}}, statgraph.WithThread("t"))
	require.ErrorIs(t, err, statgraph.ErrInterrupted)
	snap, err = g.State(ctx, "t")
	require.NoError(t, err)
	// The second turn sends to mid for all three topics: counts 2, 3, 4.
	require.Equal(t, "t|mid:2", snap.Subgraphs["mid"].Thread)
	require.Equal(t, "t|mid:4", snap.Subgraphs["mid[2]"].Thread)
	require.Equal(t, midSt{Topic: "plums"}, snap.Subgraphs["mid[2]"].State)
}

// TestStateWithoutSubgraphRuns checks that Subgraphs is nil for a graph
// whose subgraph node has not run yet, and that History leaves it nil.
func TestStateWithoutSubgraphRuns(t *testing.T) {
	ctx := context.Background()
	g := nestedGraphs(t)
	_, err := g.Invoke(ctx, outerSt{}, statgraph.WithThread("none"))
	require.NoError(t, err, "no topics: nothing is sent")
	snap, err := g.State(ctx, "none")
	require.NoError(t, err)
	require.Nil(t, snap.Subgraphs)

	_, err = g.Invoke(ctx, outerSt{Topics: []string{"figs"}}, statgraph.WithThread("h"))
	require.ErrorIs(t, err, statgraph.ErrInterrupted)
	hist, err := g.History(ctx, "h", 0, 0)
	require.NoError(t, err)
	for _, s := range hist {
		require.Nil(t, s.Subgraphs)
	}
}

// TestResume checks that Resume continues a paused thread without an
// input, as Invoke with WithResume does, through two levels of subgraphs,
// and that it refuses a thread that is not paused and a run without a
// thread.
func TestResume(t *testing.T) {
	ctx := context.Background()
	g := nestedGraphs(t)
	_, err := g.Invoke(ctx, outerSt{Topics: []string{"kiwis"}}, statgraph.WithThread("r"))
	require.ErrorIs(t, err, statgraph.ErrInterrupted)
	var res statgraph.Result[outerSt]
	out, err := g.Resume(ctx, "sure", statgraph.WithThread("r"), statgraph.WithResult(&res))
	require.NoError(t, err)
	require.Equal(t, []string{"kiwis: sure"}, out.Notes)
	require.Equal(t, out, res.State, "run options reach the run")

	_, err = g.Resume(ctx, "again", statgraph.WithThread("r"))
	require.ErrorContains(t, err, "thread is not interrupted")
	_, err = g.Resume(ctx, "no thread")
	require.Error(t, err)
	require.False(t, errors.Is(err, statgraph.ErrInterrupted))
}
