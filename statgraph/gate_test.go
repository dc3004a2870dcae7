package statgraph_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// code is the state of the gate tests: a coder writes versions, validators
// check them, and the gate records its outcome.
type code struct {
	Version    int      `json:"version"`
	RetryCount int      `json:"retry_count"`
	Passed     bool     `json:"passed"`
	Hints      []string `json:"hints"` // the hint the coder saw on each run
	Tries      []int    `json:"tries"` // the try number the coder saw on each run
	Done       bool     `json:"done"`
	Failed     bool     `json:"failed"`
}

func coder(calls *counter) statgraph.NodeFunc[code] {
	return func(ctx context.Context, s code) (code, error) {
		calls.inc("coder")
		a := statgraph.Attempts[code](ctx)
		s.Version++
		s.Hints = append(s.Hints, a.Hint)
		s.Tries = append(s.Tries, a.Try)
		return s, nil
	}
}

// check returns a validator that passes from its pass-th call on.
func check(calls *counter, name string, pass int) statgraph.ValidatorFunc[code] {
	return func(_ context.Context, s code) (statgraph.Verdict, error) {
		n := calls.inc(name)
		if n >= pass {
			return statgraph.Verdict{Passed: true}, nil
		}
		return statgraph.Verdict{Feedback: fmt.Sprintf("%s failed on version %d", name, s.Version), Hints: []string{"look at " + name}}, nil
	}
}

func recordOutcome(s code, o statgraph.GateOutcome) code {
	s.RetryCount, s.Passed = o.Retries, o.Passed
	return s
}

func markDone(_ context.Context, s code) (code, error) {
	s.Done = true
	return s, nil
}

// note000 is the pipeline of note 000: coder -> review -> test -> gate,
// with the gate retrying coder.
func note000(calls *counter, testPasses int, cfg statgraph.GateConfig[code]) *statgraph.Builder[code] {
	cfg.Validators = []string{"review", "test"}
	cfg.RetryTarget = "coder"
	cfg.Record = recordOutcome
	return statgraph.New[code]().
		AddNode("coder", coder(calls)).
		AddValidator("review", check(calls, "review", 1)).
		AddValidator("test", check(calls, "test", testPasses)).
		AddGate("gate", cfg).
		AddNode("done", markDone).
		AddEdge(statgraph.Start, "coder").AddEdge("coder", "review").AddEdge("review", "test").AddEdge("test", "gate").
		AddEdge("gate", "done").AddEdge("done", statgraph.End)
}

func TestGateRetriesUpstreamWithFeedback(t *testing.T) {
	calls := &counter{}
	g := mustCompile(t, note000(calls, 3, statgraph.GateConfig[code]{Hints: []string{"keep functions small"}}))
	var res statgraph.Result[code]
	_, err := g.Invoke(context.Background(), code{}, statgraph.WithResult(&res))
	require.NoError(t, err)
	for _, name := range []string{"coder", "review", "test"} {
		require.Equal(t, 3, calls.get(name), "calls of %s", name)
	}
	s := res.State
	require.True(t, s.Done)
	require.True(t, s.Passed)
	require.Equal(t, 2, s.RetryCount)
	require.Equal(t, []int{1, 2, 3}, s.Tries)
	require.Equal(t, "", s.Hints[0])
	require.Equal(t, "[test] test failed on version 1\n- look at test\n\nAttempt 2 of 3 at gate \"gate\": 1 blocking check(s) failed.\nConsider these improvements:\n- keep functions small", s.Hints[1])
	require.Contains(t, s.Hints[2], "[test] test failed on version 2")
	require.Contains(t, s.Hints[2], "Attempt 3 of 3")
	require.NotContains(t, s.Hints[2], "review")

	decisions := make([]statgraph.GateDecision, len(res.Gates))
	for i, o := range res.Gates {
		decisions[i] = o.Decision
	}
	require.Equal(t, []statgraph.GateDecision{statgraph.GateRetry, statgraph.GateRetry, statgraph.GatePassed}, decisions)
	require.Len(t, res.Attempts, 3)
	require.Equal(t, s.Hints[1], res.Attempts[0].Feedback)
	require.Equal(t, 1, res.Attempts[1].Output.Version-1)
	require.Empty(t, res.Warnings)
}

func TestGateExhaustedFails(t *testing.T) {
	t.Run("ends the run with ErrMaxRetries", func(t *testing.T) {
		calls := &counter{}
		g := mustCompile(t, note000(calls, 100, statgraph.GateConfig[code]{}))
		var res statgraph.Result[code]
		_, err := g.Invoke(context.Background(), code{}, statgraph.WithResult(&res))
		require.ErrorIs(t, err, statgraph.ErrMaxRetries)
		require.ErrorContains(t, err, `gate "gate" after 2 retries of coder`)
		require.Equal(t, 3, calls.get("coder"))
		require.False(t, res.State.Passed)
		require.Equal(t, statgraph.GateFailed, res.Gates[len(res.Gates)-1].Decision)
	})
	t.Run("routes to the failure node", func(t *testing.T) {
		calls := &counter{}
		b := note000(calls, 100, statgraph.GateConfig[code]{MaxRetries: 1, FailTo: "failed"}).
			AddNode("failed", func(_ context.Context, s code) (code, error) {
				s.Failed = true
				return s, nil
			}).AddEdge("failed", statgraph.End)
		out, err := mustCompile(t, b).Invoke(context.Background(), code{})
		require.NoError(t, err)
		require.True(t, out.Failed)
		require.False(t, out.Done)
		require.False(t, out.Passed)
		require.Equal(t, 1, out.RetryCount)
		require.Equal(t, 2, calls.get("coder"))
	})
}

func TestGateCompileErrors(t *testing.T) {
	pass := func(context.Context, code) (statgraph.Verdict, error) { return statgraph.Verdict{Passed: true}, nil }
	base := func() *statgraph.Builder[code] {
		return statgraph.New[code]().
			AddNode("coder", coder(&counter{})).AddValidator("lint", pass).
			AddEdge(statgraph.Start, "coder").AddEdge("coder", "lint").AddEdge("lint", "gate")
	}
	tests := []struct {
		name  string
		build func() *statgraph.Builder[code]
		want  []string
	}{
		{"gate retries itself", func() *statgraph.Builder[code] {
			return base().AddGate("gate", statgraph.GateConfig[code]{Validators: []string{"lint"}, RetryTarget: "gate"}).AddEdge("gate", statgraph.End)
		}, []string{`gate "gate" retries itself`}},
		{"validator retries itself", func() *statgraph.Builder[code] {
			return base().AddGate("gate", statgraph.GateConfig[code]{Validators: []string{"lint"}, RetryTarget: "coder",
				RetryTargets: map[string]string{"lint": "lint"}}).AddEdge("gate", statgraph.End)
		}, []string{`validator "lint" of gate "gate" retries itself`}},
		{"target not upstream", func() *statgraph.Builder[code] {
			return base().AddGate("gate", statgraph.GateConfig[code]{Validators: []string{"lint"}, RetryTarget: "after"}).
				AddNode("after", markDone).AddEdge("gate", "after").AddEdge("after", statgraph.End)
		}, []string{`gate "gate": retry target "after" is not upstream of the gate`}},
		{"unknown target, validator and failure node", func() *statgraph.Builder[code] {
			return base().AddGate("gate", statgraph.GateConfig[code]{Validators: []string{"lint", "ghost", "coder"}, RetryTarget: "nobody", FailTo: "nowhere"}).
				AddEdge("gate", statgraph.End)
		}, []string{`FailTo names unknown node "nowhere"`, `validator "ghost" is not a node`, `"coder" is not a validator`,
			`retry target "nobody" is not a node`}},
		{"validator without gate", func() *statgraph.Builder[code] {
			return base().AddNode("x", markDone).
				AddEdge("lint", "x").AddEdge("x", statgraph.End)
		}, []string{`validator "lint" feeds no gate`, `edge lint -> gate: unknown node "gate"`}},
		{"escalation without checkpointer, no retry target", func() *statgraph.Builder[code] {
			return base().AddGate("gate", statgraph.GateConfig[code]{Validators: []string{"lint"}, OnExhausted: statgraph.Escalate}).AddEdge("gate", statgraph.End)
		}, []string{`AddGate("gate"): no RetryTarget`, `gate "gate" escalates on exhaustion`}},
		{"input key of another type", func() *statgraph.Builder[code] {
			return base().AddValidator("typed", pass, statgraph.WithInputKey(func(s st) string { return "" })).
				AddEdge("coder", "typed").AddEdge("typed", "gate").
				AddGate("gate", statgraph.GateConfig[code]{Validators: []string{"lint", "typed"}, RetryTarget: "coder"}).AddEdge("gate", statgraph.End)
		}, []string{`AddValidator("typed"): WithInputKey takes a func(statgraph_test.code) string`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.build().Compile()
			var ce *statgraph.CompileError
			require.True(t, errors.As(err, &ce), "got %v; want *CompileError", err)
			for _, w := range tc.want {
				found := false
				for _, p := range ce.Problems {
					found = found || strings.Contains(p, w)
				}
				require.True(t, found, "problem %q not among %q", w, ce.Problems)
			}
			require.Len(t, ce.Problems, len(tc.want), "problems: %q", ce.Problems)
		})
	}
}
