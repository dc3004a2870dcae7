package statgraph_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/statgraph/statgraph/statgraph"
)

// Review is the state of a review subgraph: a draft and a human's verdict.
type Review struct {
	Draft   string
	Verdict string
}

// Doc is the state of the parent graph.
type Doc struct {
	Text   string
	Status string
}

// A compiled graph used as a node: the human review inside the subgraph
// pauses the whole run, and Resume through the parent continues the child
// where it stopped.
func ExampleAddSubgraph() {
	review, _ := statgraph.New[Review]().
		AddNode("ask", func(ctx context.Context, r Review) (Review, error) {
			v, err := statgraph.Interrupt[string](ctx, "approve "+r.Draft+"?")
			r.Verdict = v
			return r, err
		}).
		AddEdge(statgraph.Start, "ask").AddEdge("ask", statgraph.End).
		Compile()

	b := statgraph.New[Doc]().
		AddNode("write", func(_ context.Context, d Doc) (Doc, error) { d.Text = "v1"; return d, nil }).
		AddEdge(statgraph.Start, "write").AddEdge("write", "review").AddEdge("review", statgraph.End)
	statgraph.AddSubgraph(b, "review", review,
		func(d Doc) Review { return Review{Draft: d.Text} },
		func(d Doc, r Review) Doc { d.Status = r.Verdict; return d })
	g, _ := b.Compile(statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(false)))

	ctx := context.Background()
	var paused statgraph.Result[Doc]
	_, err := g.Invoke(ctx, Doc{}, statgraph.WithThread("doc-1"), statgraph.WithResult(&paused))
	if errors.Is(err, statgraph.ErrInterrupted) {
		fmt.Println("paused at", paused.Interrupts[0].ID, string(paused.Interrupts[0].Payload))
	}
	d, err := g.Invoke(ctx, Doc{}, statgraph.WithThread("doc-1"), statgraph.WithResume("approved"))
	fmt.Println(d.Text, d.Status, err)
	// Output:
	// paused at review|ask:1:0 "approve v1?"
	// v1 approved <nil>
}

// Counter is the state of the streaming example.
type Counter struct{ N int }

// Streaming each node's own update (LangGraph's stream_mode="updates") and
// the progress a node writes from inside (stream_mode="custom").
func ExampleWithEvents() {
	g, _ := statgraph.New[Counter]().
		AddNode("count", func(ctx context.Context, c Counter) (Counter, error) {
			progress := statgraph.RuntimeOf(ctx).Write
			for i := 1; i <= 2; i++ {
				progress(fmt.Sprintf("%d/2", i))
			}
			return Counter{N: c.N + 2}, nil
		}).
		AddNode("double", func(_ context.Context, c Counter) (Counter, error) { return Counter{N: c.N * 2}, nil }).
		AddEdge(statgraph.Start, "count").AddEdge("count", "double").AddEdge("double", statgraph.End).
		Compile()
	for ev, err := range g.Stream(context.Background(), Counter{N: 1},
		statgraph.WithEvents(statgraph.EventNodeUpdate, statgraph.EventCustom)) {
		switch ev.Kind {
		case statgraph.EventCustom:
			fmt.Println(ev.Node, "progress", ev.Custom)
		case statgraph.EventNodeUpdate:
			fmt.Println(ev.Node, "returned", ev.State.N)
		case statgraph.EventRunEnd:
			fmt.Println("final", ev.State.N, err)
		}
	}
	// Output:
	// count progress 1/2
	// count progress 2/2
	// count returned 3
	// double returned 6
	// final 6 <nil>
}

// Time travel: edit the state of a past checkpoint and continue from it.
// Only the nodes after that checkpoint run again; the old branch stays in
// the history.
func ExampleGraph_UpdateState_fork() {
	g, _ := statgraph.New[Counter]().
		AddNode("start", func(_ context.Context, c Counter) (Counter, error) { return Counter{N: c.N + 1}, nil }).
		AddNode("double", func(_ context.Context, c Counter) (Counter, error) {
			fmt.Println("double runs on", c.N)
			return Counter{N: c.N * 2}, nil
		}).
		AddEdge(statgraph.Start, "start").AddEdge("start", "double").AddEdge("double", statgraph.End).
		Compile(statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(false)))
	ctx := context.Background()
	g.Invoke(ctx, Counter{N: 1}, statgraph.WithThread("t"))

	hist, _ := g.History(ctx, "t", 0, 0)
	var beforeDouble statgraph.Snapshot[Counter]
	for _, s := range hist {
		if len(s.Next) == 1 && s.Next[0] == "double" {
			beforeDouble = s
		}
	}
	g.UpdateState(ctx, "t", Counter{N: 10}, "", statgraph.FromCheckpoint(beforeDouble.CheckpointID))
	c, err := g.Invoke(ctx, Counter{}, statgraph.WithThread("t"))
	fmt.Println(c.N, err)
	// Output:
	// double runs on 2
	// double runs on 10
	// 20 <nil>
}
