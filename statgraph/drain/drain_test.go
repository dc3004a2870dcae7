package drain_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/statgraph/drain"
)

type state struct {
	Log []string
}

// recorder counts the nodes' executions and requests the drain from
// inside the node named at, when it runs for the nth time.
type recorder struct {
	mu      sync.Mutex // guards the fields below
	runs    map[string]int
	at      string
	nth     int
	fired   bool
	request func()
}

func (rec *recorder) ran(node string) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.runs[node]++
	if node == rec.at && rec.runs[node] == rec.nth && !rec.fired {
		rec.request()
		rec.fired = true
	}
}

// drainGraph is a -> (b, three Sends to item) -> sub (a subgraph c1 -> c2)
// -> ask (an Interrupt) -> z: five steps, with a fan-out, a subgraph and a
// pause among them.
func drainGraph(t *testing.T, cp statgraph.Checkpointer, rec *recorder, opts ...statgraph.CompileOption) *statgraph.Graph[state] {
	t.Helper()
	logs := func(name string) func(context.Context, state) (state, error) {
		return func(context.Context, state) (state, error) {
			rec.ran(name)
			return state{Log: []string{name}}, nil
		}
	}
	reduce := func(cur, upd state) state {
		cur.Log = append(slices.Clip(cur.Log), upd.Log...)
		return cur
	}
	child, err := statgraph.New[state]().SetReducer(reduce).
		AddNode("c1", logs("c1")).AddNode("c2", logs("c2")).
		AddEdge(statgraph.Start, "c1").AddEdge("c1", "c2").AddEdge("c2", statgraph.End).
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	b := statgraph.New[state]().SetReducer(reduce).
		AddNode("a", logs("a")).AddNode("b", logs("b")).
		AddNode("item", func(_ context.Context, s state) (state, error) {
			rec.ran("item")
			return state{Log: []string{"item:" + s.Log[0]}}, nil
		}).
		AddSends("a", func(context.Context, state) []statgraph.Send[state] {
			var out []statgraph.Send[state]
			for _, x := range []string{"x", "y", "z"} {
				out = append(out, statgraph.Send[state]{To: "item", Input: state{Log: []string{x}}})
			}
			return out
		}, "item").
		AddNode("ask", func(ctx context.Context, s state) (state, error) {
			rec.ran("ask")
			answer, err := statgraph.Interrupt[string](ctx, "go on?")
			if err != nil {
				return s, err
			}
			return state{Log: []string{"ask:" + answer}}, nil
		}).
		AddNode("z", logs("z"))
	statgraph.AddSubgraph(b, "sub", child,
		func(state) state { return state{} },
		func(_ state, c state) state { return state{Log: slices.Concat([]string{"sub"}, c.Log)} })
	g, err := b.AddEdge(statgraph.Start, "a").AddEdge("a", "b").AddEdge("b", "sub").AddEdge("item", "sub").
		AddEdge("sub", "ask").AddEdge("ask", "z").AddEdge("z", statgraph.End).
		Compile(append(opts, statgraph.WithCheckpointer(cp))...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// drive runs thread to its end, answering the pause with "yes" and
// running the thread again after each drain, which it counts. Each
// invocation runs under a fresh drain switch, handed to rec.
func drive(t *testing.T, g *statgraph.Graph[state], rec *recorder, opts ...statgraph.RunOption) (state, int) {
	t.Helper()
	fresh := func() context.Context {
		ctx, request := drain.WithRequest(context.Background())
		rec.mu.Lock()
		rec.request = request
		rec.mu.Unlock()
		return ctx
	}
	opts = append(opts, statgraph.WithThread("t"))
	s, err := g.Invoke(fresh(), state{Log: []string{"in"}}, opts...)
	drains := 0
	for range 10 {
		switch {
		case err == nil:
			return s, drains
		case errors.Is(err, drain.ErrDrained):
			if ne, ok := errors.AsType[*statgraph.NodeError](err); ok {
				t.Errorf("the drain failed node %q instead of letting its step finish: %v", ne.Node, err)
			}
			drains++
			s, err = g.Invoke(fresh(), state{}, opts...)
		case errors.Is(err, statgraph.ErrInterrupted):
			s, err = g.Resume(fresh(), "yes", opts...)
		default:
			t.Fatalf("run: %v", err)
		}
	}
	t.Fatalf("the thread did not end in 10 invocations (last error %v)", err)
	return s, drains
}

// TestDrainThenResumeEqualsUninterrupted: a drain requested while any
// step runs (the fan-out's source, a Send, a node inside a subgraph, the
// node a pause is answered in) stops the run after that step with
// ErrDrained, and running the thread again ends in the uninterrupted run's
// state with every node run as often as there: on the memory and SQLite
// checkpointers, under each durability mode.
func TestDrainThenResumeEqualsUninterrupted(t *testing.T) {
	stores := map[string]func(t *testing.T) statgraph.Checkpointer{
		"memory":         func(*testing.T) statgraph.Checkpointer { return statgraph.NewMemoryCheckpointer(false) },
		"memory-encoded": func(*testing.T) statgraph.Checkpointer { return statgraph.NewMemoryCheckpointer(true) },
		"sqlite": func(t *testing.T) statgraph.Checkpointer {
			st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "cp.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}
	modes := map[string]statgraph.Durability{"sync": statgraph.DurabilitySync, "async": statgraph.DurabilityAsync, "exit": statgraph.DurabilityExit}
	for sname, open := range stores {
		for mname, mode := range modes {
			want := &recorder{runs: map[string]int{}}
			wantState, drains := drive(t, drainGraph(t, open(t), want), want, statgraph.WithDurability(mode))
			if drains != 0 {
				t.Fatalf("%s/%s: the uninterrupted run drained %d times", sname, mname, drains)
			}
			// ask's second run is the resumed one: the drain comes with
			// the answer to the pause, and the step it answers finishes.
			for _, at := range []struct {
				node string
				nth  int
			}{{"a", 1}, {"item", 2}, {"c1", 1}, {"ask", 2}, {"z", 1}} {
				t.Run(fmt.Sprintf("%s/%s/%s", sname, mname, at.node), func(t *testing.T) {
					rec := &recorder{runs: map[string]int{}, at: at.node, nth: at.nth}
					got, drains := drive(t, drainGraph(t, open(t), rec), rec, statgraph.WithDurability(mode))
					if !reflect.DeepEqual(got, wantState) {
						t.Errorf("state after drain and resume:\n got %v\nwant %v", got.Log, wantState.Log)
					}
					if !reflect.DeepEqual(rec.runs, want.runs) {
						t.Errorf("node runs after drain and resume: got %v; want %v (a drained step must not run again)", rec.runs, want.runs)
					}
					if wantDrains := map[bool]int{true: 0, false: 1}[at.node == "z"]; drains != wantDrains {
						t.Errorf("drains: got %d; want %d (z is the last step: nothing is left to drain)", drains, wantDrains)
					}
				})
			}
		}
	}
}

// TestDrainStopsAfterTheStep: the drained invocation runs no step after
// the one the request came in, and its error says what to do.
func TestDrainStopsAfterTheStep(t *testing.T) {
	rec := &recorder{runs: map[string]int{}, at: "item", nth: 1}
	g := drainGraph(t, statgraph.NewMemoryCheckpointer(false), rec)
	ctx, request := drain.WithRequest(context.Background())
	rec.request = request
	s, err := g.Invoke(ctx, state{Log: []string{"in"}}, statgraph.WithThread("t"))
	if !errors.Is(err, drain.ErrDrained) {
		t.Fatalf("got %v; want ErrDrained", err)
	}
	if rec.runs["sub"] != 0 || rec.runs["c1"] != 0 || rec.runs["item"] != 3 || rec.runs["b"] != 1 {
		t.Errorf("runs %v: want step 2 (b, three items) finished and nothing after it", rec.runs)
	}
	if len(s.Log) != 6 {
		t.Errorf("state %v: want the input, a and step 2's four updates", s.Log)
	}
	snap, serr := g.State(context.Background(), "t")
	if serr != nil {
		t.Fatal(serr)
	}
	if !slices.Equal(snap.Next, []string{"sub"}) {
		t.Errorf("saved checkpoint: next %v; want [sub]", snap.Next)
	}
	want := `statgraph: run drained after step 2 of thread "t", its checkpoint saved; run the thread again (WithThread("t")) to continue`
	if err.Error() != want {
		t.Errorf("error:\n got %s\nwant %s", err, want)
	}
}

// TestDrainWithoutRequest: contexts without a switch, or whose switch was
// not flipped, never drain; a request on an outer switch reaches an inner
// one.
func TestDrainWithoutRequest(t *testing.T) {
	if drain.Requested(context.Background()) {
		t.Error("a context without a switch reports a drain")
	}
	outer, request := drain.WithRequest(context.Background())
	inner, _ := drain.WithRequest(outer)
	if drain.Requested(inner) {
		t.Error("drain reported before any request")
	}
	request()
	if !drain.Requested(inner) || !drain.Requested(outer) {
		t.Error("a request on the outer switch did not reach the inner context")
	}
}

// TestDrainLeavesAPauseToBeAnswered: a drain requested in the step before
// a WithInterruptBefore pause stops the run at the pause, as without the
// drain, so that the pause is answered with WithResume (a drained thread
// would be continued without a value and refused).
func TestDrainLeavesAPauseToBeAnswered(t *testing.T) {
	rec := &recorder{runs: map[string]int{}, at: "b", nth: 1}
	g := drainGraph(t, statgraph.NewMemoryCheckpointer(false), rec, statgraph.WithInterruptBefore("sub"))
	ctx, request := drain.WithRequest(context.Background())
	rec.request = request
	_, err := g.Invoke(ctx, state{Log: []string{"in"}}, statgraph.WithThread("t"))
	if !errors.Is(err, statgraph.ErrInterrupted) || errors.Is(err, drain.ErrDrained) {
		t.Fatalf("got %v; want the pause before sub", err)
	}
	if _, err := g.Resume(context.Background(), "yes", statgraph.WithThread("t")); !errors.Is(err, statgraph.ErrInterrupted) {
		t.Fatalf("resume the pause before sub: got %v; want ask's pause", err)
	}
}
