package gate_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/gate"
)

// twoGates is coder -> (lint -> style, test -> tests) in parallel, both
// gates deciding in the same step, each passing to done and retrying the
// coder; failTo sends an exhausted tests gate to failed.
func twoGates(calls *counter, lintPasses, testPasses int, tests gate.Config) *statgraph.Builder[code] {
	b := statgraph.New[code]().AddNode("coder", coder(calls)).SetReducer(mergeReducer)
	gates.AddValidator(b, "lint", check(calls, "lint", lintPasses))
	gates.AddValidator(b, "test", check(calls, "test", testPasses))
	gates.Add(b, "style", gate.Config{Validators: []string{"lint"}, RetryTarget: "coder", Next: "done"})
	tests.Validators, tests.RetryTarget, tests.Next = []string{"test"}, "coder", "done"
	gates.Add(b, "tests", tests)
	b.AddNode("done", func(ctx context.Context, s code) (code, error) {
		calls.inc("done")
		return markDone(ctx, s)
	})
	if tests.FailTo == "failed" {
		b.AddNode("failed", func(ctx context.Context, s code) (code, error) {
			calls.inc("failed")
			return markFailed(ctx, s)
		}).AddEdge("failed", statgraph.End)
	}
	return b.AddEdge(statgraph.Start, "coder").AddEdge("coder", "lint").AddEdge("coder", "test").
		AddEdge("lint", "style").AddEdge("test", "tests").AddEdge("done", statgraph.End)
}

// TestGatesInOneStepMostRestrictiveWins: when two gates decide in the same
// step the most restrictive decision wins (DESIGN "Gates"): a retry over a
// pass, a failure over a retry; both gates' outcomes and counts are kept.
func TestGatesInOneStepMostRestrictiveWins(t *testing.T) {
	ctx := context.Background()
	t.Run("retry over pass", func(t *testing.T) {
		for _, order := range []struct{ lint, test int }{{1, 3}, {3, 1}} { // the retrying gate first or last in name order
			calls := &counter{}
			s, err := compile(t, twoGates(calls, order.lint, order.test, gate.Config{})).Invoke(ctx, code{})
			require.NoError(t, err)
			require.Equal(t, 3, calls.get("coder"), "lint/test passing from call %v", order)
			require.Equal(t, 1, calls.get("done"), "the passing gate did not go on while the other retried")
			require.True(t, s.Done)
			for _, g := range []string{"style", "tests"} {
				o, ok := s.Gate.Outcome(g)
				require.True(t, ok, g)
				require.Equal(t, gate.Passed, o.Decision, g)
			}
			require.Equal(t, 3, s.Gate.Decisions, "one round per step")
			require.Len(t, s.Gate.Attempts("style").All, 3)
			require.Len(t, s.Gate.Attempts("tests").All, 3)
			require.Contains(t, s.Seen[1], "failed on version 1", "the retry carries the failing gate's feedback")
		}
	})
	t.Run("failure over retry", func(t *testing.T) {
		calls := &counter{}
		s, err := compile(t, twoGates(calls, 100, 100, gate.Config{Policy: gate.Policy{MaxAttempts: 1}, FailTo: "failed"})).Invoke(ctx, code{})
		require.NoError(t, err)
		require.Equal(t, 1, calls.get("coder"), "the style gate's retry lost to the tests gate's failure")
		require.Equal(t, 1, calls.get("failed"))
		require.True(t, s.Failed)
	})
	t.Run("both retries join their feedback", func(t *testing.T) {
		calls := &counter{}
		s, err := compile(t, twoGates(calls, 2, 2, gate.Config{})).Invoke(ctx, code{})
		require.NoError(t, err)
		require.Equal(t, 2, calls.get("coder"))
		require.Contains(t, s.Seen[1], "[lint] lint failed on version 1")
		require.Contains(t, s.Seen[1], "[test] test failed on version 1")
	})
}

// TestGateAndValidatorInOneStep: a gate deciding in the same step as a
// validator of another gate keeps its decision, and the validator's
// verdict reaches its own gate, whichever merges first (node-name order).
func TestGateAndValidatorInOneStep(t *testing.T) {
	for _, validator := range []string{"a-test", "z-test"} {
		calls := &counter{}
		b := statgraph.New[code]().AddNode("coder", coder(calls)).SetReducer(mergeReducer).
			AddNode("prep", func(_ context.Context, s code) (code, error) { return s, nil })
		gates.AddValidator(b, "lint", check(calls, "lint", 1))
		gates.AddValidator(b, validator, check(calls, validator, 1))
		gates.Add(b, "style", gate.Config{Validators: []string{"lint"}, RetryTarget: "coder", Next: statgraph.End})
		gates.Add(b, "tests", gate.Config{Validators: []string{validator}, RetryTarget: "coder", Next: statgraph.End})
		b.AddEdge(statgraph.Start, "coder").AddEdge("coder", "lint").AddEdge("lint", "style").
			AddEdge("coder", "prep").AddEdge("prep", validator).AddEdge(validator, "tests")
		s, err := compile(t, b).Invoke(context.Background(), code{})
		require.NoError(t, err, validator)
		require.Equal(t, 1, calls.get("coder"), "%s: nothing retried", validator)
		for _, g := range []string{"style", "tests"} {
			o, ok := s.Gate.Outcome(g)
			require.True(t, ok, "%s: gate %s decided", validator, g)
			require.Equal(t, gate.Passed, o.Decision, "%s: gate %s", validator, g)
		}
	}
}
