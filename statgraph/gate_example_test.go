package statgraph_test

import (
	"context"
	"fmt"

	"github.com/statgraph/statgraph/statgraph"
)

type draft struct {
	Text  string
	Score int
}

// A writer drafts, a judge scores, and the gate sends weak drafts back with
// the judge's feedback. When the retries are used up, pick chooses the best
// of the three drafts from Attempts(ctx).All.
func ExampleAttempts_bestOfN() {
	scores := []int{6, 9, 7}
	g, err := statgraph.New[draft]().
		AddNode("write", func(ctx context.Context, d draft) (draft, error) {
			a := statgraph.Attempts[draft](ctx)
			return draft{Text: fmt.Sprintf("draft %d", a.Try), Score: scores[a.Try-1]}, nil
		}).
		AddValidator("judge", func(_ context.Context, d draft) (statgraph.Verdict, error) {
			return statgraph.Verdict{Passed: d.Score >= 10, Feedback: fmt.Sprintf("score %d of 10", d.Score)}, nil
		}).
		AddGate("gate", statgraph.GateConfig[draft]{Validators: []string{"judge"}, RetryTarget: "write", FailTo: "pick"}).
		AddNode("pick", func(ctx context.Context, d draft) (draft, error) {
			for _, t := range statgraph.Attempts[draft](ctx).All {
				if t.Output.Score > d.Score {
					d = t.Output
				}
			}
			return d, nil
		}).
		AddEdge(statgraph.Start, "write").AddEdge("write", "judge").AddEdge("judge", "gate").
		AddEdge("gate", statgraph.End).AddEdge("pick", statgraph.End).
		Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	var res statgraph.Result[draft]
	_, err = g.Invoke(context.Background(), draft{}, statgraph.WithResult(&res))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s (score %d), chosen from %d attempts\n", res.State.Text, res.State.Score, len(res.Attempts))
	for _, o := range res.Gates {
		fmt.Println(o.Decision, o.Retries)
	}
	// Output:
	// draft 2 (score 9), chosen from 3 attempts
	// retry 1
	// retry 2
	// failed 2
}
