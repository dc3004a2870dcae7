package statgraph

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

type parentState struct {
	Log    []string
	Answer string
}

type childState struct {
	Question string
	Answer   string
	Steps    []string
}

// subgraphFixture is a parent before -> sub -> after whose child runs
// prepare -> ask -> finish; ask waits for a human answer with Interrupt.
type subgraphFixture struct {
	before, prepare, ask, finish, after atomic.Int32
	block                               chan struct{} // when set, prepare blocks on it or ctx
}

func (f *subgraphFixture) child(t *testing.T) *Graph[childState] {
	t.Helper()
	step := func(c *atomic.Int32, name string) func(context.Context, childState) (childState, error) {
		return func(ctx context.Context, s childState) (childState, error) {
			c.Add(1)
			s.Steps = append(slices.Clip(s.Steps), name)
			return s, nil
		}
	}
	g, err := New[childState]().
		AddNode("prepare", func(ctx context.Context, s childState) (childState, error) {
			f.prepare.Add(1)
			if f.block != nil {
				select {
				case <-f.block:
				case <-ctx.Done():
					return s, ctx.Err()
				}
			}
			s.Steps = append(slices.Clip(s.Steps), "prepare")
			return s, nil
		}).
		AddNode("ask", func(ctx context.Context, s childState) (childState, error) {
			f.ask.Add(1)
			a, err := Interrupt[string](ctx, "answer "+s.Question)
			if err != nil {
				return s, err
			}
			s.Answer = a
			s.Steps = append(slices.Clip(s.Steps), "ask")
			return s, nil
		}).
		AddNode("finish", step(&f.finish, "finish")).
		AddEdge(Start, "prepare").AddEdge("prepare", "ask").AddEdge("ask", "finish").AddEdge("finish", End).
		Compile() // no checkpointer of its own: it runs on the parent's
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func (f *subgraphFixture) parent(t *testing.T, cp Checkpointer) *Graph[parentState] {
	t.Helper()
	step := func(c *atomic.Int32, name string) func(context.Context, parentState) (parentState, error) {
		return func(ctx context.Context, s parentState) (parentState, error) {
			c.Add(1)
			s.Log = append(slices.Clip(s.Log), name)
			return s, nil
		}
	}
	b := New[parentState]().
		AddNode("before", step(&f.before, "before")).
		AddNode("after", step(&f.after, "after")).
		AddEdge(Start, "before").AddEdge("before", "sub").AddEdge("sub", "after").AddEdge("after", End)
	AddSubgraph(b, "sub", f.child(t),
		func(p parentState) childState { return childState{Question: strings.Join(p.Log, ",")} },
		func(p parentState, c childState) parentState {
			p.Log = append(slices.Clip(p.Log), "sub:"+strings.Join(c.Steps, ","))
			p.Answer = c.Answer
			return p
		})
	g, err := b.Compile(WithCheckpointer(cp))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Mirrors LangGraph's test_nested_graph_interrupts_parallel /
// test_doubly_nested_graph_interrupts (test_pregel.py): an interrupt inside
// the subgraph pauses the parent, and resuming the parent resumes the child
// where it stopped, without running again what ran before the interrupt.
func TestSubgraphInterruptResumesThroughParent(t *testing.T) {
	ctx := context.Background()
	var f subgraphFixture
	cp := &memoryCheckpointer{encode: true}
	g := f.parent(t, cp)

	_, err := g.Invoke(ctx, parentState{}, WithThread("t"))
	var ie *interruptedError
	if !errors.As(err, &ie) || len(ie.pending) != 1 {
		t.Fatalf("Invoke: got %v, want a pause at the child's interrupt", err)
	}
	if in := ie.pending[0]; in.ID != "sub|ask:2:0" || in.Node != "sub" || string(in.Payload) != `"answer before"` {
		t.Fatalf("interrupt = %+v, want ID sub|ask:2:0 on node sub with the child's payload", in)
	}
	// The child's checkpoints live under its namespace of the thread.
	reader, err := New[childState]().AddNode("ask", func(_ context.Context, s childState) (childState, error) { return s, nil }).
		AddEdge(Start, "ask").AddEdge("ask", End).Compile(WithCheckpointer(cp))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := reader.State(ctx, "t|sub:0")
	if err != nil || snap.State.Question != "before" || !slices.Equal(snap.Next, []string{"ask"}) || len(snap.Interrupts) != 1 {
		t.Fatalf("child thread's state = %+v, %v; want question \"before\", waiting at ask", snap, err)
	}

	var nsEvents []string
	var final parentState
	for ev, err := range g.Stream(ctx, parentState{}, WithThread("t"), WithResume("yes")) {
		if err != nil {
			t.Fatalf("resume: %v", err)
		}
		if ev.Namespace != "" && ev.Kind == EventNodeEnd {
			nsEvents = append(nsEvents, ev.Namespace+"|"+ev.Node)
		}
		if ev.Kind == EventRunEnd {
			final = ev.State
		}
	}
	if final.Answer != "yes" || !slices.Equal(final.Log, []string{"before", "sub:prepare,ask,finish", "after"}) {
		t.Fatalf("final state = %+v", final)
	}
	if got := [5]int32{f.before.Load(), f.prepare.Load(), f.ask.Load(), f.finish.Load(), f.after.Load()}; got != [5]int32{1, 1, 2, 1, 1} {
		t.Fatalf("runs of before, prepare, ask, finish, after = %v, want [1 1 2 1 1] (ask runs again on resume)", got)
	}
	if !slices.Equal(nsEvents, []string{"sub|ask", "sub|finish"}) {
		t.Fatalf("child node ends in the parent's stream = %v, want [sub|ask sub|finish]", nsEvents)
	}
}

// Mirrors LangGraph's test_checkpoint_recovery (test_pregel.py) for a
// subgraph: the parent is stopped while the child runs; continuing the
// parent's thread continues the child from its own latest checkpoint.
func TestSubgraphStoppedMidChildContinues(t *testing.T) {
	var f subgraphFixture
	cp := &memoryCheckpointer{encode: true}
	f.block = make(chan struct{})
	g := f.parent(t, cp)

	// First run: the child's prepare blocks until the run is cancelled.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := g.Invoke(ctx, parentState{}, WithThread("k"))
		done <- err
	}()
	for f.prepare.Load() == 0 {
		time.Sleep(time.Millisecond) // wait for the child to be inside prepare
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v, want context.Canceled", err)
	}
	close(f.block)
	// Continue: prepare runs again (it never finished), before does not.
	_, err := g.Invoke(context.Background(), parentState{}, WithThread("k"))
	var ie *interruptedError
	if !errors.As(err, &ie) || ie.pending[0].ID != "sub|ask:2:0" {
		t.Fatalf("continued run: %v, want the child's interrupt", err)
	}
	if f.before.Load() != 1 || f.prepare.Load() != 2 {
		t.Fatalf("before ran %d times, prepare %d; want 1 and 2", f.before.Load(), f.prepare.Load())
	}
	// Stop again after the child's interrupt, then resume in a "new process":
	// a fresh graph on the same store.
	var f2 subgraphFixture
	g2 := f2.parent(t, cp)
	s, err := g2.Invoke(context.Background(), parentState{}, WithThread("k"), WithResume("ok"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Answer != "ok" || f2.prepare.Load() != 0 || f2.before.Load() != 0 || f2.finish.Load() != 1 {
		t.Fatalf("after resume: state %+v, prepare %d, before %d, finish %d; want answer ok, 0, 0, 1",
			s, f2.prepare.Load(), f2.before.Load(), f2.finish.Load())
	}
}

// Every run of a subgraph node has its own child thread, and a parent
// without a checkpointer runs the child without one.
func TestSubgraphWithoutCheckpointer(t *testing.T) {
	child, err := New[childState]().
		AddNode("x", func(ctx context.Context, s childState) (childState, error) {
			s.Steps = append(slices.Clip(s.Steps), "x")
			return s, nil
		}).AddEdge(Start, "x").AddEdge("x", End).Compile()
	if err != nil {
		t.Fatal(err)
	}
	b := New[parentState]().AddEdge(Start, "sub").AddEdge("sub", End)
	AddSubgraph(b, "sub", child, func(parentState) childState { return childState{} },
		func(p parentState, c childState) parentState { p.Log = c.Steps; return p })
	g, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	s, err := g.Invoke(context.Background(), parentState{})
	if err != nil || !slices.Equal(s.Log, []string{"x"}) {
		t.Fatalf("Invoke = %+v, %v", s, err)
	}
	if m := g.mermaid(); !strings.Contains(m, `subgraph sub["sub"]`) || !strings.Contains(m, `sub__x["x"]`) {
		t.Fatalf("Mermaid does not draw the subgraph as a box:\n%s", m)
	}
	if d := g.dot(); !strings.Contains(d, `subgraph "cluster_sub"`) || !strings.Contains(d, `"sub|x" [label="x"]`) {
		t.Fatalf("DOT does not draw the subgraph as a cluster:\n%s", d)
	}
}

// The parent's trace shows the child's nodes by their path.
func TestSubgraphInParentTrace(t *testing.T) {
	var f subgraphFixture
	g := f.parent(t, &memoryCheckpointer{})
	var trace strings.Builder
	g.Invoke(context.Background(), parentState{}, WithThread("tr"), WithTrace(&trace))
	for _, want := range []string{"s1  sub|prepare", "interrupt      sub|ask:2:0"} {
		if !strings.Contains(trace.String(), want) {
			t.Fatalf("trace lacks %q:\n%s", want, trace.String())
		}
	}
	if strings.Contains(trace.String(), "interrupt      ask:") {
		t.Fatalf("trace shows the child's interrupt twice:\n%s", trace.String())
	}
}

// Mirrors LangGraph's test_nested_graph_interrupts_parallel: two subgraph
// nodes in one step both pause; the parent's interrupt lists both, and a
// ResumeMap answering one leaves the other waiting until it is answered.
func TestSubgraphParallelInterrupts(t *testing.T) {
	ctx := context.Background()
	var f subgraphFixture
	child := f.child(t)
	b := New[parentState]().SetReducer(func(cur, up parentState) parentState {
		cur.Log = append(slices.Clip(cur.Log), up.Log...)
		return cur
	}).AddEdge(Start, "left").AddEdge(Start, "right").AddEdge("left", End).AddEdge("right", End)
	for _, name := range []string{"left", "right"} {
		AddSubgraph(b, name, child, func(parentState) childState { return childState{Question: name} },
			func(_ parentState, c childState) parentState {
				return parentState{Log: []string{name + "=" + c.Answer}}
			})
	}
	g, err := b.Compile(WithCheckpointer(&memoryCheckpointer{encode: true}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Invoke(ctx, parentState{}, WithThread("p"))
	var ie *interruptedError
	if !errors.As(err, &ie) || len(ie.pending) != 2 || ie.pending[0].ID != "left|ask:2:0" || ie.pending[1].ID != "right|ask:2:0" {
		t.Fatalf("Invoke: %v, want pauses left|ask:2:0 and right|ask:2:0", err)
	}
	_, err = g.Invoke(ctx, parentState{}, WithThread("p"), WithResume(ResumeMap{"left|ask:2:0": "L"}))
	if !errors.As(err, &ie) || len(ie.pending) != 1 || ie.pending[0].ID != "right|ask:2:0" {
		t.Fatalf("after answering left: %v, want right still waiting", err)
	}
	s, err := g.Invoke(ctx, parentState{}, WithThread("p"), WithResume("R"))
	if err != nil || !slices.Equal(s.Log, []string{"left=L", "right=R"}) {
		t.Fatalf("after answering right: %+v, %v", s, err)
	}
	if f.prepare.Load() != 2 || f.finish.Load() != 2 {
		t.Fatalf("prepare ran %d times, finish %d; want 2 and 2 (once per child)", f.prepare.Load(), f.finish.Load())
	}
}
