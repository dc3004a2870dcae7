package harness

import (
	"context"

	"github.com/statgraph/statgraph/statgraph"
)

// W1State is the state of workload W1, the retry loop.
type W1State struct {
	RetryCount   int      `json:"retry_count"`
	MaxRetries   int      `json:"max_retries"`
	Passed       bool     `json:"passed"`
	ErrorHistory []string `json:"error_history"`
}

// W1 builds the W1 graph: planner -> executor -> verifier, then a router
// back to executor, to failed, or to End.
func W1() *statgraph.Builder[W1State] {
	return statgraph.New[W1State]().
		AddNode("planner", func(_ context.Context, s W1State) (W1State, error) {
			s.RetryCount, s.Passed = 0, false
			return s, nil
		}).
		AddNode("executor", func(_ context.Context, s W1State) (W1State, error) {
			s.RetryCount++
			return s, nil
		}).
		AddNode("verifier", func(_ context.Context, s W1State) (W1State, error) {
			s.Passed = false
			s.ErrorHistory = append(s.ErrorHistory, "verify failed")
			return s, nil
		}).
		AddNode("failed", func(_ context.Context, s W1State) (W1State, error) {
			s.ErrorHistory = append(s.ErrorHistory, "max retries exceeded")
			return s, nil
		}).
		AddEdge(statgraph.Start, "planner").
		AddEdge("planner", "executor").
		AddEdge("executor", "verifier").
		AddConditionalEdges("verifier", func(_ context.Context, s W1State) string {
			switch {
			case s.Passed:
				return "done"
			case s.RetryCount >= s.MaxRetries:
				return "failed"
			}
			return "retry"
		}, map[string]string{"done": statgraph.End, "failed": "failed", "retry": "executor"}).
		AddEdge("failed", statgraph.End)
}

// CheckW1 exits unless s is W1's final state for n iterations.
func CheckW1(s W1State, n int) {
	Check(s.RetryCount == n, "retry_count=%d, want %d", s.RetryCount, n)
	Check(!s.Passed, "passed=true, want false")
	Check(len(s.ErrorHistory) == n+1, "len(error_history)=%d, want %d", len(s.ErrorHistory), n+1)
	Check(s.ErrorHistory[n] == "max retries exceeded", "last history entry %q", s.ErrorHistory[n])
}
