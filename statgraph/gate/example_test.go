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
