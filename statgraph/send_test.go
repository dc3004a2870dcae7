package statgraph_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// mapReduce builds Start -> split, which sends one task per item to "map"
// (each with the item as its own input), and map -> reduce. map fails for
// the items in *fail.
func mapReduce(items int, calls *counter, fail map[int]bool) *statgraph.Builder[st] {
	return statgraph.New[st]().SetReducer(appendReducer).
		AddNode("split", func(context.Context, st) (st, error) { return st{}, nil }).
		AddSends("split", func(_ context.Context, s st) []statgraph.Send[st] {
			out := make([]statgraph.Send[st], items)
			for i := range out {
				out[i] = statgraph.Send[st]{To: "map", Input: st{N: i}}
			}
			return out
		}, "map").
		AddNode("map", func(_ context.Context, s st) (st, error) {
			calls.inc("map:" + strconv.Itoa(s.N))
			if fail[s.N] {
				return st{}, fmt.Errorf("item %d failed", s.N)
			}
			return st{N: 1, Log: []string{strconv.Itoa(s.N * 2)}}, nil
		}).
		AddNode("reduce", func(_ context.Context, s st) (st, error) {
			calls.inc("reduce")
			return st{Log: []string{fmt.Sprintf("reduced %d", s.N)}}, nil
		}).
		AddEdge(statgraph.Start, "split").AddEdge("map", "reduce").AddEdge("reduce", statgraph.End)
}

// Mirrors LangGraph's test_pregel.py test_send_sequences and
// test_max_concurrency (Send over a list built at run time): 1,000 tasks,
// each on its own input, merged in send order whatever order they finish
// in; the node after them runs once.
func TestSendThousandItemsMergedInSendOrder(t *testing.T) {
	var calls counter
	g := mustCompile(t, mapReduce(1000, &calls, nil))
	out, err := g.Invoke(context.Background(), st{})
	require.NoError(t, err)
	require.Len(t, out.Log, 1001)
	for i := range 1000 {
		require.Equal(t, strconv.Itoa(i*2), out.Log[i])
	}
	require.Equal(t, "reduced 1000", out.Log[1000])
	require.Equal(t, 1000, out.N)
	require.Equal(t, 1, calls.get("reduce"))
	require.Contains(t, draw(t, g, "mermaid"), "split -. send .-> map")
	require.Contains(t, draw(t, g, "dot"), `"split" -> "map" [label="send", style=dashed]`)
}

// Mirrors LangGraph's test_pregel.py test_send_dedupe_on_resume: after a
// task fails, the resumed run runs only the unfinished task; the finished
// tasks' updates come from the checkpoint, in the same order.
func TestSendResumeRunsOnlyUnfinishedTasks(t *testing.T) {
	savers(t, func(t *testing.T, cp statgraph.Checkpointer) {
		var calls counter
		fail := map[int]bool{7: true}
		g := mustCompile(t, mapReduce(10, &calls, fail), statgraph.WithCheckpointer(cp))
		ctx := context.Background()
		_, err := g.Invoke(ctx, st{}, statgraph.WithThread("fan"))
		require.ErrorContains(t, err, "item 7 failed")
		snap, err := g.State(ctx, "fan")
		require.NoError(t, err)
		require.Len(t, snap.Next, 10)

		delete(fail, 7)
		g = mustCompile(t, mapReduce(10, &calls, fail), statgraph.WithCheckpointer(cp)) // as after a restart
		out, err := g.Invoke(ctx, st{}, statgraph.WithThread("fan"))
		require.NoError(t, err)
		for i := range 10 {
			want := 1
			if i == 7 {
				want = 2
			}
			require.Equal(t, want, calls.get("map:"+strconv.Itoa(i)), "item %d", i)
			require.Equal(t, strconv.Itoa(i*2), out.Log[i])
		}
		require.Equal(t, "reduced 10", out.Log[10])
		snap, err = g.State(ctx, "fan")
		require.NoError(t, err)
		require.Equal(t, 10, snap.Counters["map"])
	})
}

// Each Send is visible in Stream as a route event, and the step's Nodes list
// one entry per task.
func TestSendInStream(t *testing.T) {
	var calls counter
	g := mustCompile(t, mapReduce(3, &calls, nil))
	var sends int
	var stepNodes [][]string
	for ev, err := range g.Stream(context.Background(), st{}) {
		require.NoError(t, err)
		switch ev.Kind {
		case statgraph.EventRoute:
			if ev.Key == "send" {
				require.Equal(t, "split", ev.Node)
				require.Equal(t, "map", ev.To)
				sends++
			}
		case statgraph.EventStepStart:
			stepNodes = append(stepNodes, ev.Nodes)
		}
	}
	require.Equal(t, 3, sends)
	require.Equal(t, [][]string{{"split"}, {"map", "map", "map"}, {"reduce"}}, stepNodes)
}

func TestSendToUndeclaredNode(t *testing.T) {
	b := statgraph.New[st]().SetReducer(appendReducer).
		AddNode("split", step("split")).AddNode("map", step("map")).
		AddSends("split", func(context.Context, st) []statgraph.Send[st] {
			return []statgraph.Send[st]{{To: "split"}}
		}, "map").
		AddEdge(statgraph.Start, "split").AddEdge("map", statgraph.End)
	g := mustCompile(t, b)
	_, err := g.Invoke(context.Background(), st{})
	require.ErrorIs(t, err, statgraph.ErrUnknownRoute)
	require.ErrorContains(t, err, `node "split" sent to "split"; its declared destinations are map`)

	_, err = statgraph.New[st]().AddNode("a", step("a")).AddEdge(statgraph.Start, "a").AddEdge("a", statgraph.End).
		AddSends("a", func(context.Context, st) []statgraph.Send[st] { return nil }, "ghost").Compile()
	require.ErrorContains(t, err, `AddSends("a"): destination "ghost" is not a node of the graph`)
	require.False(t, errors.Is(err, statgraph.ErrUnknownRoute))
}

// Mirrors LangGraph's test_pregel.py test_send_react_interrupt (an
// interrupt before the node Sends go to): the run pauses before the tasks
// run and Resume runs each of them once.
func TestSendPausesBeforeItsNode(t *testing.T) {
	var calls counter
	g := mustCompile(t, mapReduce(3, &calls, nil), statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(false)),
		statgraph.WithInterruptBefore("map"))
	ctx := context.Background()
	var ie statgraph.Result[st]
	_, err := g.Invoke(ctx, st{}, statgraph.WithThread("p"), statgraph.WithResult(&ie))
	require.ErrorIs(t, err, statgraph.ErrInterrupted)
	require.Len(t, ie.Interrupts, 1)
	require.Equal(t, "map", ie.Interrupts[0].Node)
	require.Equal(t, 0, calls.get("map:0"))

	// Editing the paused thread keeps its pending Sends, once each.
	_, err = g.UpdateState(ctx, "p", st{Log: []string{"edited"}}, "")
	require.NoError(t, err)
	snap, err := g.State(ctx, "p")
	require.NoError(t, err)
	require.Equal(t, []string{"map", "map", "map"}, snap.Next)

	out, err := g.Invoke(ctx, st{}, statgraph.WithThread("p"), statgraph.WithResume(nil))
	require.NoError(t, err)
	require.Equal(t, []string{"edited", "0", "2", "4", "reduced 3"}, out.Log)
	for i := range 3 {
		require.Equal(t, 1, calls.get("map:"+strconv.Itoa(i)))
	}
}
