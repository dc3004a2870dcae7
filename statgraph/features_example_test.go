package statgraph_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/statgraph/statgraph/statgraph"
)

// Research is the state of the examples below: findings appended by
// parallel branches.
type Research struct {
	Findings []string
	Summary  string
}

func mergeResearch(cur, upd Research) Research {
	cur.Findings = statgraph.Append(cur.Findings, upd.Findings)
	cur.Summary = statgraph.Last(cur.Summary, upd.Summary)
	return cur
}

func finding(text string) func(context.Context, Research) (Research, error) {
	return func(context.Context, Research) (Research, error) {
		return Research{Findings: []string{text}}, nil
	}
}

// A waiting join: "write" runs once, after the one-step web search and the
// three-step paper search have both finished.
func ExampleBuilder_AddJoin() {
	b := statgraph.New[Research]().SetReducer(mergeResearch).
		AddNode("web", finding("web")).
		AddNode("find", finding("paper found")).
		AddNode("read", finding("paper read")).
		AddNode("cite", finding("paper cited")).
		AddNode("write", func(_ context.Context, r Research) (Research, error) {
			return Research{Summary: fmt.Sprintf("%d findings", len(r.Findings))}, nil
		}).
		AddEdge(statgraph.Start, "web").AddEdge(statgraph.Start, "find").
		AddEdge("find", "read").AddEdge("read", "cite").
		AddJoin([]string{"web", "cite"}, "write").
		AddEdge("write", statgraph.End)
	g, err := b.Compile()
	if err != nil {
		panic(err)
	}
	out, _ := g.Invoke(context.Background(), Research{})
	fmt.Println(out.Summary)
	// Output: 4 findings
}

// Send as map-reduce: "plan" decides at run time which topics to research,
// one "research" task per topic, each with its topic as its own input; the
// tasks run in parallel and "summarise" sees every finding, in send order.
func ExampleSend() {
	b := statgraph.New[Research]().SetReducer(mergeResearch).
		AddNode("plan", func(context.Context, Research) (Research, error) { return Research{}, nil }).
		AddSends("plan", func(_ context.Context, r Research) []statgraph.Send[Research] {
			var tasks []statgraph.Send[Research]
			for _, topic := range []string{"graphs", "queues", "checkpoints"} {
				tasks = append(tasks, statgraph.Send[Research]{To: "research", Input: Research{Summary: topic}})
			}
			return tasks
		}, "research").
		AddNode("research", func(_ context.Context, topic Research) (Research, error) {
			return Research{Findings: []string{"notes on " + topic.Summary}}, nil
		}).
		AddNode("summarise", func(_ context.Context, r Research) (Research, error) {
			return Research{Summary: fmt.Sprint(r.Findings)}, nil
		}).
		AddEdge(statgraph.Start, "plan").AddEdge("research", "summarise").AddEdge("summarise", statgraph.End)
	g, err := b.Compile()
	if err != nil {
		panic(err)
	}
	out, _ := g.Invoke(context.Background(), Research{})
	fmt.Println(out.Summary)
	// Output: [notes on graphs notes on queues notes on checkpoints]
}

// Command as a hand-off between two agents: the researcher passes the work
// to the writer together with its findings, and the writer ends the run.
func ExampleCommand() {
	b := statgraph.New[Research]().SetReducer(mergeResearch).
		AddCommandNode("researcher", func(context.Context, Research) (statgraph.Command[Research], error) {
			return statgraph.Command[Research]{
				Update: Research{Findings: []string{"statgraph runs super-steps"}},
				Goto:   []string{"writer"},
			}, nil
		}, []string{"writer"}).
		AddCommandNode("writer", func(_ context.Context, r Research) (statgraph.Command[Research], error) {
			return statgraph.Command[Research]{
				Update: Research{Summary: "article: " + r.Findings[0]},
				Goto:   []string{statgraph.End},
			}, nil
		}, []string{"researcher", statgraph.End}).
		AddEdge(statgraph.Start, "researcher")
	g, err := b.Compile()
	if err != nil {
		panic(err)
	}
	out, _ := g.Invoke(context.Background(), Research{})
	fmt.Println(out.Summary)
	// Output: article: statgraph runs super-steps
}

// An error handler: "fetch" fails on every attempt, so once its retries are
// used up the run goes to "apologise", which reads the error instead of
// ending the run with it.
func ExampleWithFallback() {
	b := statgraph.New[Research]().SetReducer(mergeResearch).
		AddNode("fetch", func(context.Context, Research) (Research, error) {
			return Research{}, fmt.Errorf("source offline")
		}, statgraph.WithRetry(statgraph.RetryPolicy{MaxAttempts: 2, InitialInterval: 1}),
			statgraph.WithFallback("apologise")).
		AddNode("apologise", func(ctx context.Context, _ Research) (Research, error) {
			var failed *statgraph.NodeError
			errors.As(statgraph.RuntimeOf(ctx).Fallback, &failed)
			return Research{Summary: "no findings: " + failed.Err.Error()}, nil
		}).
		AddNode("write", finding("written")).
		AddEdge(statgraph.Start, "fetch").AddEdge("fetch", "write").
		AddEdge("write", statgraph.End).AddEdge("apologise", statgraph.End)
	g, err := b.Compile()
	if err != nil {
		panic(err)
	}
	out, err := g.Invoke(context.Background(), Research{})
	fmt.Println(out.Summary, err)
	// Output: no findings: source offline <nil>
}

// A node reads its attempt and the steps left from its ctx: "search" fails
// its first attempt and is retried; the run may take 3 steps in all.
func ExampleRuntimeOf() {
	g, err := statgraph.New[Research]().
		AddNode("search", func(ctx context.Context, r Research) (Research, error) {
			rt := statgraph.RuntimeOf(ctx)
			fmt.Printf("attempt %d, %d steps left after this one\n", rt.Attempt, rt.RemainingSteps)
			if rt.Attempt == 1 {
				return r, errors.New("timeout")
			}
			return r, nil
		}, statgraph.WithRetry(statgraph.RetryPolicy{MaxAttempts: 2, InitialInterval: 1})).
		AddEdge(statgraph.Start, "search").AddEdge("search", statgraph.End).
		Compile()
	if err != nil {
		panic(err)
	}
	_, err = g.Invoke(context.Background(), Research{}, statgraph.WithStepLimit(3))
	fmt.Println(err, statgraph.RuntimeOf(context.Background()))
	// Output:
	// attempt 1, 2 steps left after this one
	// attempt 2, 2 steps left after this one
	// <nil> {0 0 <nil> <nil> <nil>}
}
