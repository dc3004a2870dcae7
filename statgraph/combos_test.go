package statgraph_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// Issue 23 (a). Mirrors LangGraph's test_pregel.py test_concurrent_emit_sends,
// streamed with stream_mode="updates": two nodes of one step send tasks to
// node "2" and route to "3.1"; every task's own update is streamed, the plain
// nodes' first, then the Sends' in send order. Streaming node updates
// panicked ("index out of range") in any step that ran Sends.
func TestSendStreamsEachTasksUpdate(t *testing.T) {
	node := func(name string) func(context.Context, st) (st, error) {
		return func(_ context.Context, s st) (st, error) {
			if name == "2" {
				return st{Log: []string{"2|" + strconv.Itoa(s.N)}}, nil
			}
			return st{Log: []string{name}}, nil
		}
	}
	sends := func(items ...int) func(context.Context, st) []statgraph.Send[st] {
		return func(context.Context, st) []statgraph.Send[st] {
			var out []statgraph.Send[st]
			for _, i := range items {
				out = append(out, statgraph.Send[st]{To: "2", Input: st{N: i}})
			}
			return out
		}
	}
	b := statgraph.New[st]().SetReducer(appendReducer)
	for _, n := range []string{"1", "1.1", "2", "3", "3.1"} {
		b.AddNode(n, node(n))
	}
	b.AddEdge(statgraph.Start, "1").AddEdge(statgraph.Start, "1.1").
		AddSends("1", sends(1, 2), "2").AddEdge("1", "3.1").
		AddSends("1.1", sends(3, 4), "2").
		AddEdge("2", "3").AddEdge("3", statgraph.End).AddEdge("3.1", statgraph.End)
	g := mustCompile(t, b)

	var updates []string
	var final st
	for ev, err := range g.Stream(context.Background(), st{Log: []string{"0"}}, statgraph.WithEvents(statgraph.EventNodeUpdate)) {
		require.NoError(t, err)
		switch ev.Kind {
		case statgraph.EventNodeUpdate:
			updates = append(updates, fmt.Sprintf("s%d %s: %v", ev.Step, ev.Node, ev.State.Log))
		case statgraph.EventRunEnd:
			final = ev.State
		}
	}
	require.Equal(t, []string{"0", "1", "1.1", "3.1", "2|1", "2|2", "2|3", "2|4", "3"}, final.Log)
	require.Equal(t, []string{
		"s1 1: [1]", "s1 1.1: [1.1]",
		"s2 3.1: [3.1]", "s2 2: [2|1]", "s2 2: [2|2]", "s2 2: [2|3]", "s2 2: [2|4]",
		"s3 3: [3]",
	}, updates)
}

// comboGraph builds Start -> split, which sends items 1..3 to "work", then
// work -> sum -> End. kind says what work is: a plain node, a cached one,
// one that interrupts for item 2, a subgraph, or a subgraph interrupting
// for item 2. calls counts the bodies run, by "work:<item>".
func comboGraph(t *testing.T, kind string, calls *counter, cp statgraph.Checkpointer) *statgraph.Graph[st] {
	body := func(ctx context.Context, s st) (st, error) {
		calls.inc("work:" + strconv.Itoa(s.N))
		statgraph.RuntimeOf(ctx).Write("working")
		entry := "work:" + strconv.Itoa(s.N)
		if s.N == 2 && (kind == "interrupt" || kind == "subgraph-interrupt") {
			answer, err := statgraph.Interrupt[string](ctx, "item 2?")
			if err != nil {
				return st{}, err
			}
			entry += ":" + answer
		}
		return st{N: s.N, Log: []string{entry}}, nil
	}
	b := statgraph.New[st]().SetReducer(appendReducer).
		AddNode("split", func(context.Context, st) (st, error) { return st{}, nil }).
		AddSends("split", func(context.Context, st) []statgraph.Send[st] {
			return []statgraph.Send[st]{{To: "work", Input: st{N: 1}}, {To: "work", Input: st{N: 2}}, {To: "work", Input: st{N: 3}}}
		}, "work").
		AddNode("sum", func(context.Context, st) (st, error) { return st{Log: []string{"sum"}}, nil }).
		AddEdge(statgraph.Start, "split").AddEdge("work", "sum").AddEdge("sum", statgraph.End)
	switch kind {
	case "plain", "interrupt":
		b.AddNode("work", body)
	case "cache":
		b.AddNode("work", body, statgraph.WithCache(time.Hour, func(s st) string { return strconv.Itoa(s.N) }))
	case "subgraph", "subgraph-interrupt":
		child := mustCompile(t, statgraph.New[st]().AddNode("echo", body).
			AddEdge(statgraph.Start, "echo").AddEdge("echo", statgraph.End))
		statgraph.AddSubgraph(b, "work", child,
			func(p st) st { return st{N: p.N} },
			func(_ st, c st) st { return st{Log: c.Log} })
	}
	return mustCompile(t, b, statgraph.WithCheckpointer(cp))
}

// comboRun runs g once on thread "t", invoked or streamed as how says, and
// returns the final state, the node updates streamed and the error.
func comboRun(g *statgraph.Graph[st], how string, opts ...statgraph.RunOption) (st, []string, error) {
	ctx := context.Background()
	opts = append(opts, statgraph.WithThread("t"))
	if how == "invoke" {
		s, err := g.Invoke(ctx, st{}, opts...)
		return s, nil, err
	}
	switch how {
	case "updates":
		opts = append(opts, statgraph.WithEvents(statgraph.EventNodeUpdate, statgraph.EventInterrupt))
	case "values+custom":
		opts = append(opts, statgraph.WithEvents(statgraph.EventUpdate, statgraph.EventCustom))
	}
	var final st
	var runErr error
	var updates []string
	for ev, err := range g.Stream(ctx, st{}, opts...) {
		switch ev.Kind {
		case statgraph.EventNodeUpdate:
			if ev.Namespace == "" && ev.Node != "split" {
				updates = append(updates, fmt.Sprint(ev.State.Log))
			}
		case statgraph.EventRunEnd:
			final, runErr = ev.State, err
		}
	}
	return final, updates, runErr
}

// Issue 23 (a): Send in every combination with subgraphs, interrupts,
// stream modes, the cache, the durability modes and resume. The graph runs
// twice on one thread (the chat pattern): each run's tasks run once each
// (the interrupting one once more when resumed), the cached ones only in
// the first run, and each Send to a subgraph runs a child of its own.
// Mirrors LangGraph's test_pregel.py test_multi_resume (Sends to an
// interrupting subgraph) and test_send_dedupe_on_resume (finished tasks
// do not run again on resume).
func TestSendCombinations(t *testing.T) {
	modes := map[string]statgraph.Durability{"sync": statgraph.DurabilitySync, "async": statgraph.DurabilityAsync, "exit": statgraph.DurabilityExit}
	for _, kind := range []string{"plain", "cache", "interrupt", "subgraph", "subgraph-interrupt"} {
		for _, mode := range []string{"sync", "async", "exit"} {
			for _, how := range []string{"invoke", "all", "updates", "values+custom"} {
				t.Run(kind+"/"+mode+"/"+how, func(t *testing.T) {
					var calls counter
					g := comboGraph(t, kind, &calls, statgraph.NewMemoryCheckpointer(true))
					interrupts := kind == "interrupt" || kind == "subgraph-interrupt"
					var want []string
					for turn := 1; turn <= 2; turn++ {
						dur := statgraph.WithDurability(modes[mode])
						s, updates, err := comboRun(g, how, dur)
						if interrupts {
							require.ErrorIs(t, err, statgraph.ErrInterrupted, "turn %d", turn)
							if how == "updates" {
								require.ElementsMatch(t, []string{"[work:1]", "[work:3]"}, updates,
									"the finished tasks' updates are streamed when the step pauses")
							}
							s, updates, err = comboRun(g, how, dur, statgraph.WithResume("yes"))
						}
						require.NoError(t, err, "turn %d", turn)
						item2 := "work:2"
						if interrupts {
							item2 += ":yes"
						}
						want = append(want, "work:1", item2, "work:3", "sum")
						require.Equal(t, want, s.Log, "turn %d", turn)
						if how == "updates" {
							require.Subset(t, updates, []string{"[work:1]", "[" + item2 + "]", "[work:3]", "[sum]"})
						}
					}
					perTurn := map[string]int{"work:1": 1, "work:2": 1, "work:3": 1}
					if interrupts {
						perTurn["work:2"] = 2
					}
					for name, n := range perTurn {
						n *= 2
						if kind == "cache" {
							n = 1 // the second turn is served from the cache
						}
						require.Equal(t, n, calls.get(name), name)
					}
				})
			}
		}
	}
}

// Issue 23 (d). Mirrors LangGraph's test_pregel.py test_multi_resume: a
// fan-out straight from Start (add_conditional_edges(START, assign_workers))
// to an interrupting subgraph, every pause answered at once by ID.
// AddSends(Start, ...) with no other edge from Start was refused by Compile.
func TestSendsFromStartToInterruptingSubgraphs(t *testing.T) {
	child := mustCompile(t, statgraph.New[st]().
		AddNode("ask", func(ctx context.Context, s st) (st, error) {
			answer, err := statgraph.Interrupt[string](ctx, s.Log[0])
			if err != nil {
				return st{}, err
			}
			return st{Log: []string{answer}}, nil
		}).AddEdge(statgraph.Start, "ask").AddEdge("ask", statgraph.End))
	prompts := []string{"a", "b", "c", "d", "e"}
	b := statgraph.New[st]().SetReducer(appendReducer).
		AddSends(statgraph.Start, func(context.Context, st) []statgraph.Send[st] {
			var out []statgraph.Send[st]
			for _, p := range prompts {
				out = append(out, statgraph.Send[st]{To: "child", Input: st{Log: []string{p}}})
			}
			return out
		}, "child").
		AddNode("cleanup", func(_ context.Context, s st) (st, error) { return st{N: len(s.Log)}, nil }).
		AddEdge("child", "cleanup").AddEdge("cleanup", statgraph.End)
	statgraph.AddSubgraph(b, "child", child, func(p st) st { return p }, func(_ st, c st) st { return st{Log: c.Log} })
	g := mustCompile(t, b, statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(true)))

	ctx := context.Background()
	var res statgraph.Result[st]
	_, err := g.Invoke(ctx, st{}, statgraph.WithThread("t"), statgraph.WithResult(&res))
	require.ErrorIs(t, err, statgraph.ErrInterrupted)
	require.Len(t, res.Interrupts, len(prompts))
	answers := statgraph.ResumeMap{}
	var asked []string
	for _, in := range res.Interrupts {
		var p string
		require.NoError(t, json.Unmarshal(in.Payload, &p))
		asked = append(asked, p)
		answers[in.ID] = "human input for prompt " + p
	}
	require.ElementsMatch(t, prompts, asked)
	out, err := g.Invoke(ctx, st{}, statgraph.WithThread("t"), statgraph.WithResume(answers))
	require.NoError(t, err)
	var want []string
	for _, p := range prompts {
		want = append(want, "human input for prompt "+p)
	}
	require.Equal(t, want, out.Log, "merged in send order")
	require.Equal(t, len(prompts), out.N)
}

// errBroken is what a failing node of these tests returns.
var errBroken = errors.New("broken")

// historyLen returns the number of checkpoints of thread.
func historyLen(t *testing.T, g *statgraph.Graph[st], thread string) int {
	t.Helper()
	h, err := g.History(context.Background(), thread, 0, 0)
	require.NoError(t, err)
	return len(h)
}

// sources returns the Source of each snapshot of thread, oldest first.
func sources(t *testing.T, g *statgraph.Graph[st], thread string) []string {
	t.Helper()
	h, err := g.History(context.Background(), thread, 0, 0)
	require.NoError(t, err)
	var out []string
	for _, s := range slices.Backward(h) {
		out = append(out, s.Source)
	}
	return out
}
