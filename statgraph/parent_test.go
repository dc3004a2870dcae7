package statgraph

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
)

type handState struct{ Log []string }

func appendLogs(cur, u handState) handState {
	return handState{Log: append(slices.Clip(cur.Log), u.Log...)}
}

// handFixture is a parent Start -> sub whose child runs a -> hand -> rest;
// hand hands off to the parent's target with ToParent; target -> End.
type handFixture struct {
	mu      sync.Mutex
	runs    map[string]int
	onHand  func() // called as hand starts, when set
	onTgt   func() // called as target starts, when set
	handTo  Command[handState]
	handErr func() error // when set, hand returns this instead
	edges   bool         // Start -> other -> target as well
}

func (f *handFixture) count(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.runs == nil {
		f.runs = map[string]int{}
	}
	f.runs[name]++
}

func (f *handFixture) ran(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.runs[name]
}

func (f *handFixture) build(t *testing.T, cp Checkpointer, subOpts ...NodeOption) (*Graph[handState], error) {
	t.Helper()
	log := func(name string, hook *func()) func(context.Context, handState) (handState, error) {
		return func(context.Context, handState) (handState, error) {
			f.count(name)
			if hook != nil && *hook != nil {
				(*hook)()
			}
			return handState{Log: []string{name}}, nil
		}
	}
	child, err := New[handState]().SetReducer(appendLogs).
		AddNode("a", log("a", nil)).
		AddNode("hand", func(context.Context, handState) (handState, error) {
			f.count("hand")
			if f.onHand != nil {
				f.onHand()
			}
			if f.handErr != nil {
				return handState{}, f.handErr()
			}
			return handState{}, ToParent(f.handTo)
		}).
		AddNode("rest", log("rest", nil)).
		AddEdge(Start, "a").AddEdge("a", "hand").AddEdge("hand", "rest").AddEdge("rest", End).
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	b := New[handState]().SetReducer(appendLogs).
		AddNode("target", log("target", &f.onTgt)).
		AddNode("other", log("other", nil)).
		AddEdge(Start, "sub").AddEdge("target", End)
	if f.edges {
		b.AddEdge(Start, "other").AddEdge("other", "target").AddEdge("sub", End)
	} else {
		b.AddEdge("other", End)
	}
	AddSubgraph(b, "sub", child,
		func(p handState) handState { return handState{} },
		func(p, c handState) handState { return handState{Log: []string{"sub:" + strings.Join(c.Log, ",")}} },
		subOpts...)
	if cp == nil {
		return b.Compile()
	}
	return b.Compile(WithCheckpointer(cp))
}

// Mirrors LangGraph's parent-command tests (test_pregel.py: a subgraph node
// returns Command(graph=Command.PARENT, goto=..., update=...), e.g. in
// test_parent_command and the multi-agent hand-off tests): the child stops,
// the update is merged through the parent's reducer, and the parent goes
// to the named node, which is reachable only through the hand-off.
func TestToParentHandsOffToParentNode(t *testing.T) {
	f := &handFixture{handTo: Command[handState]{Update: handState{Log: []string{"handed"}}, Goto: []string{"target"}}}
	g, err := f.build(t, nil, WithDestinations("target", "other"))
	if err != nil {
		t.Fatal(err)
	}
	var gotos []string
	var final handState
	for ev, err := range g.Stream(context.Background(), handState{}, WithResult(&Result[handState]{})) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == EventRoute && ev.Key == gotoKey {
			gotos = append(gotos, ev.Node+">"+ev.To)
		}
		if ev.Kind == EventRunEnd {
			final = ev.State
		}
	}
	if got, want := final.Log, []string{"handed", "target"}; !slices.Equal(got, want) {
		t.Fatalf("final log %q; want %q (the child's update through ToParent, then the parent's target)", got, want)
	}
	if gotos == nil || gotos[0] != "sub>target" {
		t.Fatalf("goto events %q; want sub>target", gotos)
	}
	if f.ran("a") != 1 || f.ran("hand") != 1 || f.ran("rest") != 0 || f.ran("other") != 0 {
		t.Fatalf("runs %v; want a and hand once, rest and other never", f.runs)
	}
	if m := g.mermaid(); !strings.Contains(m, "sub -.-> target") {
		t.Fatalf("Mermaid does not draw the declared hand-off:\n%s", m)
	}
}

// The ways a hand-off can be wrong each say what, where and what to do.
func TestToParentErrors(t *testing.T) {
	ctx := context.Background()
	to := func(names ...string) Command[handState] { return Command[handState]{Goto: names} }

	f := &handFixture{handTo: to("target")}
	if _, err := f.build(t, nil, WithDestinations("ghost")); err == nil ||
		!strings.Contains(err.Error(), `WithDestinations("sub"): destination "ghost" is not a node of the graph`) {
		t.Errorf("unknown declared destination: %v", err)
	}

	f = &handFixture{handTo: to("other"), edges: true}
	g, err := f.build(t, nil, WithDestinations("target"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Invoke(ctx, handState{}); !errors.Is(err, errUnknownRoute) ||
		!strings.Contains(err.Error(), `subgraph node "sub" handed off to "other"`) {
		t.Errorf("hand-off outside the declared destinations: %v", err)
	}

	f = &handFixture{handTo: to("target")}
	if _, err := f.build(t, nil); err == nil || !strings.Contains(err.Error(), `"target"`) {
		t.Errorf("target reachable only by an undeclared hand-off compiled: %v", err)
	}

	// Without WithDestinations, target reachable by an edge: the run says
	// which option to add.
	f = &handFixture{handTo: to("target"), edges: true}
	g, err = f.build(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Invoke(ctx, handState{}); err == nil ||
		!strings.Contains(err.Error(), `declares no destinations; add WithDestinations("target") to AddSubgraph("sub")`) {
		t.Errorf("hand-off without WithDestinations: %v", err)
	}

	f = &handFixture{handErr: func() error { return ToParent(Command[childState]{Goto: []string{"target"}}) }}
	g, err = f.build(t, nil, WithDestinations("target", "other"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Invoke(ctx, handState{}); err == nil ||
		!strings.Contains(err.Error(), "returned ToParent with a Command[statgraph.childState], but the parent graph's state is statgraph.handState") {
		t.Errorf("hand-off of another state type: %v", err)
	}

	// Outside a subgraph: the run ends with the error, not retried.
	var calls int
	top := mustBuild(t, New[handState]().
		AddNode("n", func(context.Context, handState) (handState, error) {
			calls++
			return handState{}, ToParent(Command[handState]{Goto: []string{"x"}})
		}, WithRetry(RetryPolicy{MaxAttempts: 3, InitialInterval: 1})).
		AddEdge(Start, "n").AddEdge("n", End))
	_, err = top.Invoke(ctx, handState{})
	var ne *NodeError
	if !errors.As(err, &ne) || !strings.Contains(err.Error(), "does not run as a subgraph (AddSubgraph)") || calls != 1 {
		t.Errorf("ToParent outside a subgraph: %v after %d calls; want a NodeError saying so after 1 call", err, calls)
	}

	// WithDestinations on a plain node is reported.
	_, err = New[handState]().AddNode("n", func(context.Context, handState) (handState, error) { return handState{}, nil }, WithDestinations("n")).
		AddEdge(Start, "n").AddEdge("n", End).Compile()
	if err == nil || !strings.Contains(err.Error(), `WithDestinations on node "n"`) {
		t.Errorf("WithDestinations on a plain node: %v", err)
	}
}

func mustBuild(t *testing.T, b *Builder[handState]) *Graph[handState] {
	t.Helper()
	g, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// imageThreads copies what store holds now for the given threads into a
// new store: what a kill -9 at this moment would leave.
func imageThreads(t *testing.T, store *memoryCheckpointer, threads ...string) *memoryCheckpointer {
	m := &memoryCheckpointer{encode: true}
	for _, th := range threads {
		list, err := store.Range(context.Background(), th, 0, 0, 0)
		if err != nil && !errors.Is(err, ErrNoCheckpoint) {
			t.Error(err)
		}
		for i := len(list) - 1; i >= 0; i-- {
			if err := m.Put(context.Background(), list[i]); err != nil {
				t.Error(err)
			}
		}
	}
	return m
}

// Mirrors LangGraph's test_checkpoint_recovery (test_pregel.py) for a
// hand-off: a process killed after the parent saved the hand-off's step
// runs only the target on restart; one killed while the handing-off node
// ran runs that node again, but not the child's earlier node.
func TestToParentKilledAndResumed(t *testing.T) {
	ctx := context.Background()
	cmd := Command[handState]{Update: handState{Log: []string{"handed"}}, Goto: []string{"target"}}
	threads := []string{"k", "k" + nsSep + "sub:0"}

	for _, tc := range []struct {
		name              string
		at                string // the node in which the process is killed
		wantHand, wantTgt int    // runs after the restart
		wantA             int
	}{
		{name: "killed in target", at: "target", wantHand: 0, wantTgt: 1, wantA: 0},
		{name: "killed in hand", at: "hand", wantHand: 1, wantTgt: 1, wantA: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &memoryCheckpointer{encode: true}
			var image *memoryCheckpointer
			first := &handFixture{handTo: cmd}
			kill := func() { image = imageThreads(t, store, threads...) }
			if tc.at == "hand" {
				first.onHand = kill
			} else {
				first.onTgt = kill
			}
			g, err := first.build(t, store, WithDestinations("target", "other"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := g.Invoke(ctx, handState{}, WithThread("k")); err != nil {
				t.Fatal(err)
			}
			restarted := &handFixture{handTo: cmd}
			g2, err := restarted.build(t, image, WithDestinations("target", "other"))
			if err != nil {
				t.Fatal(err)
			}
			out, err := g2.Invoke(ctx, handState{}, WithThread("k"))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := out.Log, []string{"handed", "target"}; !slices.Equal(got, want) {
				t.Errorf("log after restart %q; want %q", got, want)
			}
			if restarted.ran("a") != tc.wantA || restarted.ran("hand") != tc.wantHand || restarted.ran("target") != tc.wantTgt || restarted.ran("rest") != 0 {
				t.Errorf("runs after restart %v; want a %d, hand %d, target %d, rest 0", restarted.runs, tc.wantA, tc.wantHand, tc.wantTgt)
			}
		})
	}
}
