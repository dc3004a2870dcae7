package gate_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/gate"
)

// Article is the state of the example: the draft, and the gates'
// bookkeeping.
type Article struct {
	Draft string
	Gate  gate.State
}

// Example: a writer, a blocking length check and an advisory spelling
// check, and a gate that sends the draft back with the checks' feedback.
func Example() {
	gs := gate.For(func(a *Article) *gate.State { return &a.Gate })
	b := statgraph.New[Article]().
		AddNode("write", func(_ context.Context, a Article) (Article, error) {
			if a.Gate.Feedback != "" {
				fmt.Println("rewriting after:", strings.SplitN(a.Gate.Feedback, "\n", 2)[0])
			}
			a.Draft += "more words "
			return a, nil
		})
	gs.AddValidator(b, "length", func(_ context.Context, a Article) (gate.Verdict, error) {
		n := len(strings.Fields(a.Draft))
		return gate.Verdict{Passed: n >= 6, Feedback: fmt.Sprintf("%d words; write at least 6", n)}, nil
	})
	gs.AddValidator(b, "spelling", func(context.Context, Article) (gate.Verdict, error) {
		return gate.Verdict{Feedback: "\"teh\" on line 1"}, nil
	}, gate.WithMode(gate.Advisory))
	gs.Add(b, "review", gate.Config{Validators: []string{"length", "spelling"}, RetryTarget: "write", Next: statgraph.End})
	b.AddEdge(statgraph.Start, "write").AddEdge("write", "length").AddEdge("length", "spelling").AddEdge("spelling", "review")
	g, err := b.Compile()
	if err != nil {
		panic(err)
	}
	out, err := g.Invoke(context.Background(), Article{})
	if err != nil {
		panic(err)
	}
	fmt.Println(len(strings.Fields(out.Draft)), "words")
	for _, w := range out.Gate.Warnings {
		fmt.Println("warning:", w.Validator, w.Message)
	}
	// Output:
	// rewriting after: [length] 2 words; write at least 6
	// rewriting after: [length] 4 words; write at least 6
	// 6 words
	// warning: spelling "teh" on line 1
	// warning: spelling "teh" on line 1
	// warning: spelling "teh" on line 1
}

// ExampleState_Attempts: best of N. The writer reads its attempt context
// (which try this is, the hint that sent it back); when the gate's
// attempts are used up, the failure node picks the attempt with the
// fewest failed checks from All, whose Output the gate recorded with
// WithOutput.
func ExampleState_Attempts() {
	gs := gate.For(func(a *Article) *gate.State { return &a.Gate }).
		WithOutput(func(a Article) string { return a.Draft })
	drafts := []string{"one two", "one two three four five", "one"}
	b := statgraph.New[Article]().
		AddNode("write", func(_ context.Context, a Article) (Article, error) {
			at := a.Gate.Attempts("review")
			fmt.Printf("try %d, %d earlier, hint %q\n", at.Try, len(at.Tries), strings.SplitN(at.Hint, "\n", 2)[0])
			a.Draft = drafts[at.Try-1]
			return a, nil
		}).
		AddNode("best", func(_ context.Context, a Article) (Article, error) {
			all := a.Gate.Attempts("review").All
			best := all[0]
			for _, t := range all[1:] {
				if t.Failed() < best.Failed() {
					best = t
				}
			}
			a.Draft = best.Output
			return a, nil
		})
	for _, w := range []int{2, 4, 6} { // one check per length, so a longer draft fails fewer
		gs.AddValidator(b, fmt.Sprintf("at-least-%d", w), func(_ context.Context, a Article) (gate.Verdict, error) {
			n := len(strings.Fields(a.Draft))
			return gate.Verdict{Passed: n >= w, Feedback: fmt.Sprintf("%d words; write at least %d", n, w)}, nil
		})
	}
	gs.Add(b, "review", gate.Config{Validators: []string{"at-least-2", "at-least-4", "at-least-6"}, RetryTarget: "write",
		Next: statgraph.End, FailTo: "best"})
	b.AddEdge(statgraph.Start, "write").AddEdge("write", "at-least-2").AddEdge("at-least-2", "at-least-4").
		AddEdge("at-least-4", "at-least-6").AddEdge("at-least-6", "review").AddEdge("best", statgraph.End)
	g, err := b.Compile()
	if err != nil {
		panic(err)
	}
	out, err := g.Invoke(context.Background(), Article{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("best: %q\n", out.Draft)
	// Output:
	// try 1, 0 earlier, hint ""
	// try 2, 1 earlier, hint "[at-least-4] 2 words; write at least 4"
	// try 3, 2 earlier, hint "[at-least-6] 5 words; write at least 6"
	// best: "one two three four five"
}
