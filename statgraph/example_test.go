package statgraph_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/statgraph/statgraph/statgraph"
)

// TaskState is the state of the planner -> executor -> verifier loop.
type TaskState struct {
	Plan         string
	Code         string
	TestsPassed  bool
	RetryCount   int
	MaxRetries   int
	ErrorHistory []string
	Phase        string
}

// The retry loop of the orchestrator: the verifier counts every
// verification, should_retry_or_end sends a failed attempt back to the
// executor until MaxRetries, and a failed node ends the run.
func Example_retryLoop() {
	attempts := 0
	g, err := statgraph.New[TaskState]().
		AddNode("planner", func(_ context.Context, s TaskState) (TaskState, error) {
			s.Plan = "make Add add"
			return s, nil
		}).
		AddNode("executor", func(_ context.Context, s TaskState) (TaskState, error) {
			attempts++
			s.Code = map[bool]string{true: "a + b", false: "a - b"}[attempts >= 2]
			return s, nil
		}).
		AddNode("verifier", func(_ context.Context, s TaskState) (TaskState, error) {
			s.TestsPassed = s.Code == "a + b"
			if !s.TestsPassed {
				s.ErrorHistory = append(s.ErrorHistory, fmt.Sprintf("Retry %d: TestAdd failed", s.RetryCount))
			}
			s.RetryCount++
			return s, nil
		}).
		AddNode("failed", func(_ context.Context, s TaskState) (TaskState, error) {
			s.Phase = "failed"
			return s, nil
		}).
		AddEdge(statgraph.Start, "planner").
		AddEdge("planner", "executor").
		AddEdge("executor", "verifier").
		AddConditionalEdges("verifier", func(_ context.Context, s TaskState) string {
			switch {
			case s.TestsPassed:
				return "done"
			case s.RetryCount >= s.MaxRetries:
				return "failed"
			}
			return "retry"
		}, map[string]string{"retry": "executor", "done": statgraph.End, "failed": "failed"}).
		AddEdge("failed", statgraph.End).
		Compile()
	if err != nil {
		panic(err)
	}
	out, err := g.Invoke(context.Background(), TaskState{MaxRetries: 3})
	fmt.Println(out.Code, out.RetryCount, out.ErrorHistory, err)
	// Output: a + b 2 [Retry 0: TestAdd failed] <nil>
}

// Eight validators run in parallel in one super-step; the reducer appends
// their results at the barrier in node-name order, and the gate runs once
// after all of them.
func Example_fanOut() {
	type Checks struct {
		Results []string
		Verdict string
	}
	b := statgraph.New[Checks]().SetReducer(func(cur, upd Checks) Checks {
		cur.Results = statgraph.Append(cur.Results, upd.Results)
		cur.Verdict = statgraph.Last(cur.Verdict, upd.Verdict)
		return cur
	})
	for i := range 8 {
		name := fmt.Sprintf("check_%d", i)
		b.AddNode(name, func(context.Context, Checks) (Checks, error) {
			return Checks{Results: []string{name + ":ok"}}, nil
		}).AddEdge(statgraph.Start, name).AddEdge(name, "gate")
	}
	b.AddNode("gate", func(_ context.Context, c Checks) (Checks, error) {
		return Checks{Verdict: fmt.Sprintf("%d/8 passed", strings.Count(strings.Join(c.Results, " "), ":ok"))}, nil
	}).AddEdge("gate", statgraph.End)
	g, err := b.Compile()
	if err != nil {
		panic(err)
	}
	out, _ := g.Invoke(context.Background(), Checks{})
	fmt.Println(out.Results[0], out.Results[7], out.Verdict)
	// Output: check_0:ok check_7:ok 8/8 passed
}

// A run with a checkpointer pauses at Interrupt and continues with the
// answer given to Resume.
func ExampleInterrupt() {
	type Doc struct{ Text, Approval string }
	g, _ := statgraph.New[Doc]().
		AddNode("review", func(ctx context.Context, d Doc) (Doc, error) {
			ok, err := statgraph.Interrupt[string](ctx, "approve "+d.Text+"?")
			if err != nil {
				return d, err
			}
			d.Approval = ok
			return d, nil
		}).
		AddEdge(statgraph.Start, "review").AddEdge("review", statgraph.End).
		Compile(statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(false)))
	ctx := context.Background()
	_, err := g.Invoke(ctx, Doc{Text: "v1"}, statgraph.WithThread("doc-1"))
	fmt.Println(err)
	out, err := g.Resume(ctx, "yes", statgraph.WithThread("doc-1"))
	fmt.Println(out.Approval, err)
	// Output:
	// statgraph: thread "doc-1" paused at review:1:0; continue it with WithResume(value)
	// yes <nil>
}
