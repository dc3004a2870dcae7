package statgraph_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// Sends returned by a router (AddSends, evaluated after the source's step
// on the merged state, as LangGraph's conditional edges are) and inside a
// Command (Command.Sends), each test named after the LangGraph test it
// mirrors.

// sq is the state of these tests: a log of what ran, with Arg, the input a
// Send gives its task, and Next, what a Send's task returns as its Command
// sends.
type sq struct {
	Log  []string
	Arg  int
	Next []int
}

func sqReduce(cur, u sq) sq { return sq{Log: statgraph.Append(cur.Log, u.Log)} }

// sqNode logs its name, and for a task given an Arg, name|Arg.
func sqNode(name string) func(context.Context, sq) (sq, error) {
	return func(_ context.Context, s sq) (sq, error) {
		if s.Arg != 0 {
			return sq{Log: []string{fmt.Sprintf("%s|%d", name, s.Arg)}}, nil
		}
		return sq{Log: []string{name}}, nil
	}
}

// TestConcurrentEmitSends mirrors test_pregel.py's
// test_concurrent_emit_sends: two nodes of one step each send to node 2
// and one of them also routes to 3.1; the plain node's update merges
// first, then the Sends in the order they were sent.
func TestConcurrentEmitSends(t *testing.T) {
	to2 := func(args ...int) func(context.Context, sq) []statgraph.Send[sq] {
		return func(context.Context, sq) []statgraph.Send[sq] {
			var out []statgraph.Send[sq]
			for _, a := range args {
				out = append(out, statgraph.Send[sq]{To: "2", Input: sq{Arg: a}})
			}
			return out
		}
	}
	b := statgraph.New[sq]().SetReducer(sqReduce)
	for _, n := range []string{"1", "1.1", "2", "3", "3.1"} {
		b.AddNode(n, sqNode(n))
	}
	g := mustCompile(t, b.AddEdge(statgraph.Start, "1").AddEdge(statgraph.Start, "1.1").
		AddSends("1", to2(1, 2), "2").
		AddConditionalEdges("1", func(context.Context, sq) string { return "3.1" }, map[string]string{"3.1": "3.1"}).
		AddSends("1.1", to2(3, 4), "2").
		AddEdge("2", "3").AddEdge("3", statgraph.End).AddEdge("3.1", statgraph.End))
	out, err := g.Invoke(context.Background(), sq{Log: []string{"0"}})
	require.NoError(t, err)
	require.Equal(t, []string{"0", "1", "1.1", "3.1", "2|1", "2|2", "2|3", "2|4", "3"}, out.Log)
}

// seqGraph is test_send_sequences: node 1 sends two tasks to command node
// 2 and routes to 3.1; each task of 2 whose input asks for it sends one
// more task to 2 with its Command; every run of 2 goes on to 3.
func seqGraph() *statgraph.Builder[sq] {
	b := statgraph.New[sq]().SetReducer(sqReduce).
		AddNode("1", sqNode("1")).AddNode("3", sqNode("3")).AddNode("3.1", sqNode("3.1")).
		AddCommandNode("2", func(ctx context.Context, s sq) (statgraph.Command[sq], error) {
			u, _ := sqNode("2")(ctx, s)
			c := statgraph.Command[sq]{Update: u}
			for _, n := range s.Next {
				c.Sends = append(c.Sends, statgraph.Send[sq]{To: "2", Input: sq{Arg: n}})
			}
			return c, nil
		}, []string{"2"}).
		AddEdge(statgraph.Start, "1").
		AddSends("1", func(context.Context, sq) []statgraph.Send[sq] {
			return []statgraph.Send[sq]{{To: "2", Input: sq{Arg: 30, Next: []int{3}}}, {To: "2", Input: sq{Arg: 40, Next: []int{4}}}}
		}, "2").
		AddConditionalEdges("1", func(context.Context, sq) string { return "3.1" }, map[string]string{"3.1": "3.1"}).
		AddEdge("2", "3").AddEdge("3", statgraph.End).AddEdge("3.1", statgraph.End)
	return b
}

// TestSendSequences mirrors test_pregel.py's test_send_sequences: Sends in
// a Command returned by a Send's task run in the next step, after that
// step's plain node.
func TestSendSequences(t *testing.T) {
	g := mustCompile(t, seqGraph())
	var routes []string
	var out sq
	for ev, err := range g.Stream(context.Background(), sq{Log: []string{"0"}}, statgraph.WithEvents(statgraph.EventRoute, statgraph.EventRunEnd)) {
		require.NoError(t, err)
		if ev.Kind == statgraph.EventRoute && ev.Node == "2" {
			routes = append(routes, fmt.Sprintf("%d %s %s", ev.Step, ev.Key, ev.To))
		}
		out = ev.State
	}
	require.Equal(t, []string{"0", "1", "3.1", "2|30", "2|40", "3", "2|3", "2|4", "3"}, out.Log)
	require.Equal(t, []string{"2 send 2", "2 send 2"}, routes)
}

// TestCommandGotoSend mirrors the graph of test_pregel.py's
// test_update_as_input's fork test (one: Command(goto=[Send("two", {})])
// beside the edge one -> two): the Send runs two besides the edge, so two
// runs twice in one step, and three once after it.
func TestCommandGotoSend(t *testing.T) {
	type nm struct{ Name string }
	join := func(cur, u nm) nm {
		if cur.Name == "" {
			return u
		}
		return nm{cur.Name + " > " + u.Name}
	}
	var twos atomic.Int32
	cp := statgraph.NewMemoryCheckpointer(false)
	g := mustCompile(t, statgraph.New[nm]().SetReducer(join).
		AddCommandNode("one", func(context.Context, nm) (statgraph.Command[nm], error) {
			return statgraph.Command[nm]{Update: nm{"one"}, Sends: []statgraph.Send[nm]{{To: "two"}}}, nil
		}, []string{"two"}).
		AddNode("two", func(context.Context, nm) (nm, error) { twos.Add(1); return nm{"two"}, nil }).
		AddNode("three", func(context.Context, nm) (nm, error) { return nm{"three"}, nil }).
		AddEdge(statgraph.Start, "one").AddEdge("one", "two").AddEdge("two", "three").AddEdge("three", statgraph.End),
		statgraph.WithCheckpointer(cp))
	ctx := context.Background()
	out, err := g.Invoke(ctx, nm{"start"}, statgraph.WithThread("1"))
	require.NoError(t, err)
	require.Equal(t, "start > one > two > two > three", out.Name)
	require.EqualValues(t, 2, twos.Load())
	snap, err := g.State(ctx, "1")
	require.NoError(t, err)
	require.Equal(t, map[string]int{"one": 1, "two": 2, "three": 1}, snap.Counters)
}

// TestCommandSendToUndeclaredNode: a Command's Send outside the node's
// declared destinations ends the run with an error naming them.
func TestCommandSendToUndeclaredNode(t *testing.T) {
	g := mustCompile(t, statgraph.New[sq]().SetReducer(sqReduce).
		AddCommandNode("a", func(context.Context, sq) (statgraph.Command[sq], error) {
			return statgraph.Command[sq]{Sends: []statgraph.Send[sq]{{To: "c"}}}, nil
		}, []string{"b", statgraph.End}).
		AddNode("b", sqNode("b")).AddNode("c", sqNode("c")).
		AddEdge(statgraph.Start, "a").AddEdge(statgraph.Start, "c").AddEdge("b", statgraph.End).AddEdge("c", statgraph.End))
	_, err := g.Invoke(context.Background(), sq{})
	require.ErrorContains(t, err, `node "a" sent to "c" with a Command; its declared destinations are b`)
}

// reactGraph is test_send_react_interrupt_control's graph: agent answers
// with a tool call and sends it to the tool foo in its Command (control
// true) or through a router (control false: test_send_react_interrupt).
func reactGraph(control bool, fooCalls, agentCalls *atomic.Int32) *statgraph.Builder[sq] {
	b := statgraph.New[sq]().SetReducer(sqReduce).
		AddNode("foo", func(_ context.Context, call sq) (sq, error) {
			fooCalls.Add(1)
			return sq{Log: []string{fmt.Sprintf("tool %d", call.Arg)}}, nil
		}).
		AddEdge(statgraph.Start, "agent").AddEdge("foo", statgraph.End)
	call := statgraph.Send[sq]{To: "foo", Input: sq{Arg: 123}}
	if control {
		return b.AddCommandNode("agent", func(context.Context, sq) (statgraph.Command[sq], error) {
			agentCalls.Add(1)
			return statgraph.Command[sq]{Update: sq{Log: []string{"ai"}}, Sends: []statgraph.Send[sq]{call}}, nil
		}, []string{"foo"})
	}
	return b.AddNode("agent", func(context.Context, sq) (sq, error) { agentCalls.Add(1); return sq{Log: []string{"ai"}}, nil }).
		AddSends("agent", func(_ context.Context, s sq) []statgraph.Send[sq] {
			if s.Log[len(s.Log)-1] != "ai" {
				return nil
			}
			return []statgraph.Send[sq]{call}
		}, "foo").AddEdge("agent", statgraph.End)
}

// TestSendReactInterruptControl mirrors test_large_cases.py's
// test_send_react_interrupt_control (Sends in the agent's Command) and
// test_send_react_interrupt (Sends from a router on the agent): without a
// checkpointer the tool runs once; with WithInterruptBefore("foo") the
// run pauses before it, the tool has not run, and resuming runs it once;
// under DurabilityExit the paused thread's State shows the pending task.
func TestSendReactInterruptControl(t *testing.T) {
	for _, control := range []bool{true, false} {
		t.Run(map[bool]string{true: "command", false: "router"}[control], func(t *testing.T) {
			ctx := context.Background()
			var calls atomic.Int32
			out, err := mustCompile(t, reactGraph(control, &calls, new(atomic.Int32))).Invoke(ctx, sq{Log: []string{"hello"}})
			require.NoError(t, err)
			require.Equal(t, []string{"hello", "ai", "tool 123"}, out.Log)
			require.EqualValues(t, 1, calls.Load())

			calls.Store(0)
			g := mustCompile(t, reactGraph(control, &calls, new(atomic.Int32)),
				statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(false)), statgraph.WithInterruptBefore("foo"))
			out, err = g.Invoke(ctx, sq{Log: []string{"hello"}}, statgraph.WithThread("1"))
			require.ErrorIs(t, err, statgraph.ErrInterrupted)
			require.Equal(t, []string{"hello", "ai"}, out.Log)
			require.EqualValues(t, 0, calls.Load())
			out, err = g.Resume(ctx, nil, statgraph.WithThread("1"))
			require.NoError(t, err)
			require.Equal(t, []string{"hello", "ai", "tool 123"}, out.Log)
			require.EqualValues(t, 1, calls.Load())

			calls.Store(0)
			_, err = g.Invoke(ctx, sq{Log: []string{"hello"}}, statgraph.WithThread("2"), statgraph.WithDurability(statgraph.DurabilityExit))
			require.ErrorIs(t, err, statgraph.ErrInterrupted)
			require.EqualValues(t, 0, calls.Load())
			snap, err := g.State(ctx, "2")
			require.NoError(t, err)
			require.Equal(t, []string{"foo"}, snap.Next)
			require.Equal(t, 1, snap.Step)
			out, err = g.Resume(ctx, nil, statgraph.WithThread("2"))
			require.NoError(t, err)
			require.Equal(t, "hello ai tool 123", strings.Join(out.Log, " "))
			require.EqualValues(t, 1, calls.Load())
		})
	}
}

// TestCommandSendsSurviveAFailedSibling mirrors test_send_dedupe_on_resume
// for a Command's Sends: when a sibling of the command node fails, the
// Command's update and Sends are saved with the step, so the resumed run
// does not run the command node again and still runs its Sends.
func TestCommandSendsSurviveAFailedSibling(t *testing.T) {
	var agents, flaky atomic.Int32
	var calls atomic.Int32
	b := reactGraph(true, &calls, &agents)
	b.AddNode("flaky", func(context.Context, sq) (sq, error) {
		if flaky.Add(1) == 1 {
			return sq{}, fmt.Errorf("flaky once")
		}
		return sq{Log: []string{"flaky"}}, nil
	}).AddEdge(statgraph.Start, "flaky").AddEdge("flaky", statgraph.End)
	g := mustCompile(t, b, statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(false)))
	ctx := context.Background()
	_, err := g.Invoke(ctx, sq{Log: []string{"hello"}}, statgraph.WithThread("t"))
	require.ErrorContains(t, err, "flaky once")
	out, err := g.Invoke(ctx, sq{}, statgraph.WithThread("t"))
	require.NoError(t, err)
	require.Equal(t, []string{"hello", "ai", "flaky", "tool 123"}, out.Log)
	require.EqualValues(t, 1, calls.Load())
	require.EqualValues(t, 1, agents.Load())
}

// TestUpdateStateClearsPendingSend mirrors the second half of
// test_large_cases.py's test_send_react_interrupt_control (and of
// test_send_react_interrupt): while the run is paused before the tool with
// the agent's Send pending, an update made as the agent with an answer
// that calls no tool clears the pending Send, so the thread has nothing
// left to run and the tool never runs.
func TestUpdateStateClearsPendingSend(t *testing.T) {
	for _, control := range []bool{true, false} {
		t.Run(map[bool]string{true: "command", false: "router"}[control], func(t *testing.T) {
			ctx := context.Background()
			var calls atomic.Int32
			g := mustCompile(t, reactGraph(control, &calls, new(atomic.Int32)),
				statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(false)), statgraph.WithInterruptBefore("foo"))
			for _, d := range []statgraph.Durability{statgraph.DurabilitySync, statgraph.DurabilityExit} {
				_, err := g.Invoke(ctx, sq{Log: []string{"hello"}}, statgraph.WithThread(fmt.Sprint(d)), statgraph.WithDurability(d))
				require.ErrorIs(t, err, statgraph.ErrInterrupted)
				snap, err := g.State(ctx, fmt.Sprint(d))
				require.NoError(t, err)
				require.Equal(t, []string{"foo"}, snap.Next)

				_, err = g.UpdateState(ctx, fmt.Sprint(d), sq{Log: []string{"bye now"}}, "agent")
				require.NoError(t, err)
				snap, err = g.State(ctx, fmt.Sprint(d))
				require.NoError(t, err)
				require.Empty(t, snap.Next, "the pending Send to foo is still there after the update")
				require.Empty(t, snap.Interrupts)
				require.Equal(t, []string{"hello", "ai", "bye now"}, snap.State.Log)
				_, err = g.Resume(ctx, nil, statgraph.WithThread(fmt.Sprint(d)))
				require.ErrorContains(t, err, "not interrupted")
				require.EqualValues(t, 0, calls.Load(), "the tool ran")
			}
		})
	}
}
