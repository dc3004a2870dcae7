package statgraph_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// echoParent is a parent with one subgraph node, call_inner, whose child
// answers "Processing: <topic>" for the topic of the parent's call count
// (apples, then bananas); with ask the child's first node interrupts first
// and a second node answers "Done". seen collects each child run's log.
func echoParent(t *testing.T, ask bool, calls *atomic.Int32, seen *[][]string, cp statgraph.Checkpointer) *statgraph.Graph[st] {
	cb := statgraph.New[st]().SetReducer(appendReducer).
		AddNode("process", func(ctx context.Context, s st) (st, error) {
			if ask {
				if _, err := statgraph.Interrupt[bool](ctx, "continue?"); err != nil {
					return st{}, err
				}
			}
			return st{Log: []string{"Processing: " + s.Log[len(s.Log)-1]}}, nil
		}).AddEdge(statgraph.Start, "process")
	if ask {
		cb.AddNode("respond", only("Done")).AddEdge("process", "respond").AddEdge("respond", statgraph.End)
	} else {
		cb.AddEdge("process", statgraph.End)
	}
	child := mustCompile(t, cb)
	b := statgraph.New[st]()
	statgraph.AddSubgraph(b, "call_inner", child,
		func(st) st {
			topic := "apples"
			if calls.Add(1) > 1 {
				topic = "bananas"
			}
			return st{Log: []string{"tell me about " + topic}}
		},
		func(_ st, c st) st {
			*seen = append(*seen, c.Log)
			return st{Log: []string{c.Log[len(c.Log)-1]}}
		})
	b.AddEdge(statgraph.Start, "call_inner").AddEdge("call_inner", statgraph.End)
	return mustCompile(t, b, statgraph.WithCheckpointer(cp))
}

// Issue 23 (b). Mirrors LangGraph's test_subgraph_persistence.py
// test_stateless_state_resets: the second invocation of a finished thread
// runs its subgraph afresh. The child's thread was named after a count
// that restarted at 0, so the second turn read the first turn's result.
func TestSubgraphStateResetsOnNextInvocation(t *testing.T) {
	var calls atomic.Int32
	var seen [][]string
	g := echoParent(t, false, &calls, &seen, statgraph.NewMemoryCheckpointer(true))
	ctx := context.Background()
	out, err := g.Invoke(ctx, st{}, statgraph.WithThread("chat"))
	require.NoError(t, err)
	require.Equal(t, []string{"Processing: tell me about apples"}, out.Log)
	out, err = g.Invoke(ctx, st{}, statgraph.WithThread("chat"))
	require.NoError(t, err)
	require.Equal(t, []string{"Processing: tell me about bananas"}, out.Log)
	require.Equal(t, [][]string{
		{"tell me about apples", "Processing: tell me about apples"},
		{"tell me about bananas", "Processing: tell me about bananas"},
	}, seen)
}

// Issue 23 (b). Mirrors test_subgraph_persistence.py
// test_stateless_state_resets_with_interrupt: each invocation's subgraph
// interrupts again and is resumed on its own.
func TestSubgraphStateResetsWithInterrupt(t *testing.T) {
	var calls atomic.Int32
	var seen [][]string
	g := echoParent(t, true, &calls, &seen, statgraph.NewMemoryCheckpointer(true))
	ctx := context.Background()
	for turn := range 2 {
		var res statgraph.Result[st]
		_, err := g.Invoke(ctx, st{}, statgraph.WithThread("chat"), statgraph.WithResult(&res))
		require.ErrorIs(t, err, statgraph.ErrInterrupted, "turn %d: the child's interrupt fires again", turn+1)
		require.Len(t, res.Interrupts, 1)
		require.JSONEq(t, `"continue?"`, string(res.Interrupts[0].Payload))
		out, err := g.Invoke(ctx, st{}, statgraph.WithThread("chat"), statgraph.WithResume(true))
		require.NoError(t, err)
		require.Equal(t, []string{"Done"}, out.Log)
	}
	require.Equal(t, [][]string{
		{"tell me about apples", "Processing: tell me about apples", "Done"},
		{"tell me about bananas", "Processing: tell me about bananas", "Done"},
	}, seen)
}

// Issue 23 (b), time travel. Mirrors test_time_travel.py
// test_subgraph_replay_from_before and test_subgraph_fork_from_before:
// replaying or forking from the checkpoint before the subgraph node runs
// the subgraph again.
func TestSubgraphRunsAgainOnReplayAndFork(t *testing.T) {
	var calls counter
	child := mustCompile(t, statgraph.New[st]().SetReducer(appendReducer).
		AddNode("step_a", func(context.Context, st) (st, error) { calls.inc("step_a"); return st{Log: []string{"sub_a"}}, nil }).
		AddNode("step_b", func(context.Context, st) (st, error) { calls.inc("step_b"); return st{Log: []string{"sub_b"}}, nil }).
		AddEdge(statgraph.Start, "step_a").AddEdge("step_a", "step_b").AddEdge("step_b", statgraph.End))
	b := statgraph.New[st]().SetReducer(appendReducer).
		AddNode("parent_node", func(context.Context, st) (st, error) {
			calls.inc("parent_node")
			return st{Log: []string{"parent"}}, nil
		}).
		AddNode("post_process", only("post")).
		AddEdge(statgraph.Start, "parent_node").AddEdge("parent_node", "subgraph").
		AddEdge("subgraph", "post_process").AddEdge("post_process", statgraph.End)
	statgraph.AddSubgraph(b, "subgraph", child, func(p st) st { return st{} }, func(_ st, c st) st { return st{Log: c.Log} })
	g := mustCompile(t, b, statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(true)))
	ctx := context.Background()
	_, err := g.Invoke(ctx, st{}, statgraph.WithThread("1"))
	require.NoError(t, err)
	hist, err := g.History(ctx, "1", 0, 0)
	require.NoError(t, err)
	var before int64
	for _, s := range hist {
		if len(s.Next) == 1 && s.Next[0] == "subgraph" {
			before = s.CheckpointID
		}
	}
	require.NotZero(t, before)

	out, err := g.Invoke(ctx, st{}, statgraph.WithThread("1"), statgraph.FromCheckpoint(before))
	require.NoError(t, err)
	require.Equal(t, []string{"parent", "sub_a", "sub_b", "post"}, out.Log)
	require.Equal(t, 2, calls.get("step_a"), "the replay ran the subgraph")
	require.Equal(t, 1, calls.get("parent_node"))

	_, err = g.UpdateState(ctx, "1", st{Log: []string{"forked"}}, "", statgraph.FromCheckpoint(before))
	require.NoError(t, err)
	out, err = g.Invoke(ctx, st{}, statgraph.WithThread("1"))
	require.NoError(t, err)
	require.Equal(t, []string{"parent", "forked", "sub_a", "sub_b", "post"}, out.Log)
	require.Equal(t, 3, calls.get("step_b"), "the fork ran the subgraph")
}

// Issue 23 (c). a paused before it runs (WithInterruptBefore); once
// resumed, its sibling b pauses itself with Interrupt in the same step.
// Resuming b must not pause before a again: LangGraph takes an
// interrupt_before once per trigger (the versions its __interrupt__
// channel has seen), as test_pregel.py test_command_with_static_breakpoints
// relies on.
func TestInterruptBeforeIsNotTakenTwice(t *testing.T) {
	var calls counter
	b := statgraph.New[st]().SetReducer(appendReducer).
		AddNode("a", func(context.Context, st) (st, error) { calls.inc("a"); return st{Log: []string{"a"}}, nil }).
		AddNode("b", func(ctx context.Context, s st) (st, error) {
			calls.inc("b")
			answer, err := statgraph.Interrupt[string](ctx, "b?")
			if err != nil {
				return st{}, err
			}
			return st{Log: []string{"b:" + answer}}, nil
		}).
		AddEdge(statgraph.Start, "a").AddEdge(statgraph.Start, "b").
		AddEdge("a", statgraph.End).AddEdge("b", statgraph.End)
	g := mustCompile(t, b, statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(true)), statgraph.WithInterruptBefore("a"))
	ctx := context.Background()
	var whens []string
	var res statgraph.Result[st]
	_, err := g.Invoke(ctx, st{}, statgraph.WithThread("t"), statgraph.WithResult(&res))
	for errors.Is(err, statgraph.ErrInterrupted) && len(whens) < 5 {
		whens = append(whens, res.Interrupts[0].When+" "+res.Interrupts[0].Node)
		_, err = g.Invoke(ctx, st{}, statgraph.WithThread("t"), statgraph.WithResume("yes"), statgraph.WithResult(&res))
	}
	require.NoError(t, err)
	require.Equal(t, []string{"before a", "inside b"}, whens, "the pause before a is taken once")
	require.Equal(t, []string{"a", "b:yes"}, res.State.Log)
	require.Equal(t, 1, calls.get("a"))
}

// Issue 23 (e). Mirrors test_pregel.py test_pending_writes_resume, for
// every durability mode: one and two run from Start, two fails (twice,
// under a retry policy of 2 attempts). The failed step adds no checkpoint
// (one's update is kept as a pending write of the checkpoint the step
// started from, as LangGraph's put_writes does), and neither does a retry
// that fails again ("no new checkpoints saved"); once two succeeds, one
// does not run again and both updates are merged.
func TestFailedStepAddsNoCheckpoint(t *testing.T) {
	modes := []statgraph.Durability{statgraph.DurabilitySync, statgraph.DurabilityAsync, statgraph.DurabilityExit}
	for _, mode := range modes {
		t.Run(strconv.Itoa(int(mode)), func(t *testing.T) {
			var calls counter
			var fixed atomic.Bool
			b := statgraph.New[st]().SetReducer(appendReducer).
				AddNode("one", func(context.Context, st) (st, error) { calls.inc("one"); return st{N: 2}, nil }).
				AddNode("two", func(context.Context, st) (st, error) {
					calls.inc("two")
					if !fixed.Load() {
						return st{}, errBroken
					}
					return st{N: 3}, nil
				}, statgraph.WithRetry(statgraph.RetryPolicy{MaxAttempts: 2, InitialInterval: 1})).
				AddEdge(statgraph.Start, "one").AddEdge(statgraph.Start, "two").
				AddEdge("one", statgraph.End).AddEdge("two", statgraph.End)
			g := mustCompile(t, b, statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(true)))
			ctx := context.Background()
			run := func() (st, error) { // continues the thread: LangGraph's invoke(None)
				return g.Invoke(ctx, st{}, statgraph.WithThread("1"), statgraph.WithDurability(mode))
			}
			_, err := g.Invoke(ctx, st{N: 1}, statgraph.WithThread("1"), statgraph.WithDurability(mode))
			require.ErrorIs(t, err, errBroken)
			require.Equal(t, 1, calls.get("one"))
			require.Equal(t, 2, calls.get("two"))
			after := historyLen(t, g, "1")
			require.Equal(t, 1, after, "the input's checkpoint (under exit: the one written as the run stopped)")

			_, err = run()
			require.ErrorIs(t, err, errBroken)
			require.Equal(t, 1, calls.get("one"), "one's update was kept")
			require.Equal(t, 4, calls.get("two"))
			require.Equal(t, after, historyLen(t, g, "1"), "no new checkpoints saved")

			fixed.Store(true)
			out, err := run()
			require.NoError(t, err)
			require.Equal(t, 6, out.N, "1 + 2 + 3")
			require.Equal(t, 1, calls.get("one"))
			require.Equal(t, 2, historyLen(t, g, "1"))
		})
	}
}

// Issue 23 (e). A resume whose node then fails adds no checkpoint either;
// the resume value is kept with the step, so the thread continues without
// WithResume (LangGraph keeps it as a pending RESUME write).
func TestFailedResumeAddsNoCheckpoint(t *testing.T) {
	var broken atomic.Bool
	b := statgraph.New[st]().SetReducer(appendReducer).
		AddNode("ask", func(ctx context.Context, s st) (st, error) {
			answer, err := statgraph.Interrupt[string](ctx, "ok?")
			if err != nil {
				return st{}, err
			}
			if broken.Load() {
				return st{}, errBroken
			}
			return st{Log: []string{"ask:" + answer}}, nil
		}).
		AddEdge(statgraph.Start, "ask").AddEdge("ask", statgraph.End)
	g := mustCompile(t, b, statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(true)))
	ctx := context.Background()
	_, err := g.Invoke(ctx, st{}, statgraph.WithThread("t"))
	require.ErrorIs(t, err, statgraph.ErrInterrupted)
	paused := historyLen(t, g, "t")
	broken.Store(true)
	_, err = g.Invoke(ctx, st{}, statgraph.WithThread("t"), statgraph.WithResume("yes"))
	require.ErrorIs(t, err, errBroken)
	_, err = g.Invoke(ctx, st{}, statgraph.WithThread("t"))
	require.ErrorIs(t, err, errBroken)
	require.Equal(t, paused, historyLen(t, g, "t"), "no new checkpoints saved")
	snap, err := g.State(ctx, "t")
	require.NoError(t, err)
	require.Empty(t, snap.Interrupts, "the interrupt is answered")
	broken.Store(false)
	out, err := g.Invoke(ctx, st{}, statgraph.WithThread("t"))
	require.NoError(t, err)
	require.Equal(t, []string{"ask:yes"}, out.Log)
}

// Issue 23 (e). Continuing a failed thread with new input saves that input
// in a checkpoint of its own (LangGraph's "input" checkpoint), which the
// next failure keeps.
func TestContinuedThreadSavesItsInput(t *testing.T) {
	b := statgraph.New[st]().SetReducer(appendReducer).
		AddNode("a", only("a")).
		AddNode("b", func(context.Context, st) (st, error) { return st{}, errors.New("b is broken") }).
		AddEdge(statgraph.Start, "a").AddEdge("a", "b").AddEdge("b", statgraph.End)
	g := mustCompile(t, b, statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(true)))
	ctx := context.Background()
	_, err := g.Invoke(ctx, st{}, statgraph.WithThread("u"))
	require.ErrorContains(t, err, "b is broken")
	require.Equal(t, []string{"input", "loop"}, sources(t, g, "u"))
	_, err = g.Invoke(ctx, st{Log: []string{"more"}}, statgraph.WithThread("u"))
	require.ErrorContains(t, err, "b is broken")
	require.Equal(t, []string{"input", "loop", "input"}, sources(t, g, "u"))
	snap, err := g.State(ctx, "u")
	require.NoError(t, err)
	require.Equal(t, []string{"a", "more"}, snap.State.Log, "the input is kept")
	require.Equal(t, []string{"b"}, snap.Next)
}

// Issue 23 (f). Mirrors test_pregel.py test_parallel_interrupts: two Sends
// from Start to an interrupting subgraph, resumed one at a time, streamed
// as updates. A task that finished in a step that paused has its update
// streamed then (it was held back until the resume), and again, restored,
// when the step completes.
func TestUpdatesStreamedWhenASiblingPauses(t *testing.T) {
	child := mustCompile(t, statgraph.New[st]().
		AddNode("get_human_input", func(ctx context.Context, s st) (st, error) {
			answer, err := statgraph.Interrupt[string](ctx, s.Log[0])
			if err != nil {
				return st{}, err
			}
			return st{Log: []string{answer}}, nil
		}).AddEdge(statgraph.Start, "get_human_input").AddEdge("get_human_input", statgraph.End))
	b := statgraph.New[st]().SetReducer(appendReducer).
		AddSends(statgraph.Start, func(context.Context, st) []statgraph.Send[st] {
			return []statgraph.Send[st]{{To: "child_graph", Input: st{Log: []string{"a"}}}, {To: "child_graph", Input: st{Log: []string{"b"}}}}
		}, "child_graph").
		AddNode("cleanup", only("cleanup")).
		AddEdge("child_graph", "cleanup").AddEdge("cleanup", statgraph.End)
	statgraph.AddSubgraph(b, "child_graph", child, func(p st) st { return p }, func(_ st, c st) st { return st{Log: c.Log} })
	g := mustCompile(t, b, statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(true)))

	var events [][]string
	var resume statgraph.RunOption
	for invokes := 1; invokes <= 10; invokes++ {
		opts := []statgraph.RunOption{statgraph.WithThread("t"), statgraph.WithEvents(statgraph.EventNodeUpdate, statgraph.EventInterrupt)}
		if resume != nil {
			opts = append(opts, resume)
		}
		var got []string
		var pending []statgraph.Interruption
		for ev, err := range g.Stream(context.Background(), st{}, opts...) {
			switch {
			case ev.Kind == statgraph.EventNodeUpdate && ev.Namespace == "":
				got = append(got, ev.Node+" "+strings.Join(ev.State.Log, ","))
			case ev.Kind == statgraph.EventInterrupt:
				pending = ev.Interrupts
				for _, in := range ev.Interrupts {
					got = append(got, "interrupt "+string(in.Payload))
				}
			case ev.Kind == statgraph.EventRunEnd && len(pending) == 0:
				require.NoError(t, err)
			}
		}
		events = append(events, got)
		if len(pending) == 0 {
			break
		}
		resume = statgraph.WithResume(statgraph.ResumeMap{pending[0].ID: "Resume #" + strconv.Itoa(invokes)})
	}
	require.Len(t, events, 3)
	require.ElementsMatch(t, []string{`interrupt "a"`, `interrupt "b"`}, events[0])
	require.ElementsMatch(t, []string{"child_graph Resume #1", `interrupt "b"`}, events[1])
	require.ElementsMatch(t, []string{"child_graph Resume #1", "child_graph Resume #2", "cleanup cleanup"}, events[2])
}

// Issue 23 (f). A fallback that runs after a resume still gets the failed
// node's *NodeError (it got an error carrying only the message).
func TestFallbackErrorKeepsItsTypeAfterResume(t *testing.T) {
	var got error
	b := statgraph.New[st]().
		AddNode("risky", func(context.Context, st) (st, error) { return st{}, statgraph.Permanent(errBroken) },
			statgraph.WithFallback("recover")).
		AddNode("recover", func(ctx context.Context, s st) (st, error) {
			got = statgraph.RuntimeOf(ctx).Fallback
			return st{Log: []string{"recovered"}}, nil
		}).
		AddEdge(statgraph.Start, "risky").AddEdge("risky", statgraph.End).AddEdge("recover", statgraph.End)
	g := mustCompile(t, b, statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(true)), statgraph.WithInterruptBefore("recover"))
	ctx := context.Background()
	_, err := g.Invoke(ctx, st{}, statgraph.WithThread("t"))
	require.ErrorIs(t, err, statgraph.ErrInterrupted)
	out, err := g.Invoke(ctx, st{}, statgraph.WithThread("t"), statgraph.WithResume(nil))
	require.NoError(t, err)
	require.Equal(t, []string{"recovered"}, out.Log)
	var ne *statgraph.NodeError
	require.ErrorAs(t, got, &ne)
	require.Equal(t, "risky", ne.Node)
	require.Equal(t, 1, ne.Attempt)
	require.ErrorContains(t, ne.Err, "broken")
}

// Issue 23 (g). Mirrors test_interruption.py
// test_interruption_without_state_updates: with a pause after every node,
// DurabilityExit writes one checkpoint per stop (1, 2, 3), not the run's
// input; DurabilitySync writes the input and every step.
func TestDurabilityExitWritesOnlyWhenTheRunStops(t *testing.T) {
	for mode, want := range map[statgraph.Durability][]int{
		statgraph.DurabilitySync: {2, 3, 4},
		statgraph.DurabilityExit: {1, 2, 3},
	} {
		b := statgraph.New[st]().AddNode("step_1", step("1")).AddNode("step_2", step("2")).AddNode("step_3", step("3")).
			AddEdge(statgraph.Start, "step_1").AddEdge("step_1", "step_2").AddEdge("step_2", "step_3").AddEdge("step_3", statgraph.End)
		g := mustCompile(t, b, statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(true)),
			statgraph.WithInterruptAfter("step_1", "step_2", "step_3"))
		ctx := context.Background()
		var got []int
		var nexts []string
		opts := []statgraph.RunOption{statgraph.WithThread("1"), statgraph.WithDurability(mode)}
		for i := range 3 {
			_, err := g.Invoke(ctx, st{}, opts...)
			if i < 2 {
				require.ErrorIs(t, err, statgraph.ErrInterrupted)
			} else {
				require.NoError(t, err)
			}
			got = append(got, historyLen(t, g, "1"))
			snap, err := g.State(ctx, "1")
			require.NoError(t, err)
			nexts = append(nexts, strings.Join(snap.Next, ","))
			opts = []statgraph.RunOption{statgraph.WithThread("1"), statgraph.WithDurability(mode), statgraph.WithResume(nil)}
		}
		require.Equal(t, want, got, "checkpoints after each stop, mode %d", mode)
		require.Equal(t, []string{"step_2", "step_3", ""}, nexts)
	}
}

// Issue 23 (g). Under DurabilityExit a subgraph's run writes nothing when
// it finishes (LangGraph's nested graph writes at exit only on an error or
// an interrupt), and writes when it pauses.
func TestDurabilityExitSubgraphWritesOnlyWhenItPauses(t *testing.T) {
	for _, ask := range []bool{false, true} {
		var calls atomic.Int32
		var seen [][]string
		store := statgraph.NewMemoryCheckpointer(true)
		g := echoParent(t, ask, &calls, &seen, store)
		ctx := context.Background()
		_, err := g.Invoke(ctx, st{}, statgraph.WithThread("t"), statgraph.WithDurability(statgraph.DurabilityExit))
		child, cerr := store.Range(ctx, "t|call_inner:0", 0, 0, 0)
		require.NoError(t, cerr)
		if !ask {
			require.NoError(t, err)
			require.Empty(t, child, "a finished child writes nothing")
			continue
		}
		require.ErrorIs(t, err, statgraph.ErrInterrupted)
		require.Len(t, child, 1, "a paused child writes where it paused")
		_, err = g.Invoke(ctx, st{}, statgraph.WithThread("t"), statgraph.WithDurability(statgraph.DurabilityExit), statgraph.WithResume(true))
		require.NoError(t, err)
		require.Equal(t, []string{"tell me about apples", "Processing: tell me about apples", "Done"}, seen[0])
	}
}

// Issue 23, user-facing: a router reads RuntimeOf(ctx) as a node does
// (LangGraph's routers see the RemainingSteps managed value like nodes):
// this loop stops itself one step before the limit instead of failing.
func TestRouterReadsRuntime(t *testing.T) {
	b := statgraph.New[st]().
		AddNode("loop", step("loop")).
		AddEdge(statgraph.Start, "loop").
		AddConditionalEdges("loop", func(ctx context.Context, s st) string {
			if statgraph.RuntimeOf(ctx).RemainingSteps <= 1 {
				return "done"
			}
			return "again"
		}, map[string]string{"again": "loop", "done": statgraph.End})
	g := mustCompile(t, b)
	out, err := g.Invoke(context.Background(), st{}, statgraph.WithStepLimit(5))
	require.NoError(t, err)
	require.Equal(t, 4, out.N)
}

// Issue 23, user-facing: a paused run's interrupts are reachable from its
// error, not only through WithResult (LangGraph returns them with the
// result, "__interrupt__").
func TestInterruptsReachableFromTheError(t *testing.T) {
	var calls counter
	fail := false
	g := mustCompile(t, chain(&calls, &fail), statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(true)),
		statgraph.WithInterruptBefore("b"))
	_, err := g.Invoke(context.Background(), st{}, statgraph.WithThread("t"))
	var paused interface {
		Interrupts() []statgraph.Interruption
	}
	require.ErrorAs(t, err, &paused)
	require.Len(t, paused.Interrupts(), 1)
	require.Equal(t, "b", paused.Interrupts()[0].Node)
	require.Equal(t, "before", paused.Interrupts()[0].When)
}
