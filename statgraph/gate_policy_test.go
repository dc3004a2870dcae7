package statgraph_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// verdictOf returns a validator with a fixed verdict, counting its calls.
func verdictOf(calls *counter, name string, passed bool, opts ...statgraph.ValidatorOption) (string, statgraph.ValidatorFunc[code], []statgraph.ValidatorOption) {
	return name, func(context.Context, code) (statgraph.Verdict, error) {
		calls.inc(name)
		return statgraph.Verdict{Passed: passed, Feedback: name + " says no"}, nil
	}, opts
}

// fanOut builds coder -> validators (in parallel) -> gate -> done.
func fanOut(calls *counter, cfg statgraph.GateConfig[code], validators ...func() (string, statgraph.ValidatorFunc[code], []statgraph.ValidatorOption)) *statgraph.Builder[code] {
	b := statgraph.New[code]().AddNode("coder", coder(calls)).AddNode("done", markDone).
		AddEdge(statgraph.Start, "coder").AddEdge("gate", "done").AddEdge("done", statgraph.End)
	for _, v := range validators {
		name, fn, opts := v()
		b.AddValidator(name, fn, opts...).AddEdge("coder", name).AddEdge(name, "gate")
		cfg.Validators = append(cfg.Validators, name)
	}
	if cfg.RetryTarget == "" {
		cfg.RetryTarget = "coder"
	}
	cfg.Record = recordOutcome
	return b.AddGate("gate", cfg)
}

func TestGateEnforcementModes(t *testing.T) {
	tests := []struct {
		name      string
		opts      []statgraph.ValidatorOption
		mode      statgraph.Mode
		blocks    bool
		warnings  int
		coderRuns int
	}{
		{"no options: critical, blocking", nil, statgraph.ModeBlocking, true, 0, 3},
		{"high: advisory", []statgraph.ValidatorOption{statgraph.WithSeverity(statgraph.SeverityHigh)}, statgraph.ModeAdvisory, false, 1, 1},
		{"medium: advisory", []statgraph.ValidatorOption{statgraph.WithSeverity(statgraph.SeverityMedium)}, statgraph.ModeAdvisory, false, 1, 1},
		{"low: informational", []statgraph.ValidatorOption{statgraph.WithSeverity(statgraph.SeverityLow)}, statgraph.ModeInformational, false, 0, 1},
		{"low made blocking", []statgraph.ValidatorOption{statgraph.WithSeverity(statgraph.SeverityLow), statgraph.WithMode(statgraph.ModeBlocking)}, statgraph.ModeBlocking, true, 0, 3},
		{"critical made advisory", []statgraph.ValidatorOption{statgraph.WithMode(statgraph.ModeAdvisory)}, statgraph.ModeAdvisory, false, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := &counter{}
			g := mustCompile(t, fanOut(calls, statgraph.GateConfig[code]{},
				func() (string, statgraph.ValidatorFunc[code], []statgraph.ValidatorOption) {
					return verdictOf(calls, "review", false, tc.opts...)
				},
				func() (string, statgraph.ValidatorFunc[code], []statgraph.ValidatorOption) {
					return verdictOf(calls, "test", true)
				}))
			var res statgraph.Result[code]
			_, err := g.Invoke(context.Background(), code{}, statgraph.WithResult(&res))
			require.Equal(t, tc.coderRuns, calls.get("coder"))
			require.Equal(t, tc.mode, res.Gates[0].Verdicts[0].Mode)
			require.Len(t, res.Warnings, tc.warnings)
			if tc.blocks {
				require.ErrorIs(t, err, statgraph.ErrMaxRetries)
				return
			}
			require.NoError(t, err)
			require.True(t, res.State.Done)
			require.True(t, res.State.Passed)
			if tc.warnings > 0 {
				require.Equal(t, statgraph.Warning{Gate: "gate", Validator: "review", Step: 3, Message: "review says no"}, res.Warnings[0])
			}
		})
	}
}

func TestGateMostRestrictiveLimitAcrossTwoGates(t *testing.T) {
	calls := &counter{}
	fail := func(context.Context, code) (statgraph.Verdict, error) {
		calls.inc("lint")
		return statgraph.Verdict{Feedback: "lint failed"}, nil
	}
	pass := func(context.Context, code) (statgraph.Verdict, error) { return statgraph.Verdict{Passed: true}, nil }
	g := mustCompile(t, statgraph.New[code]().
		AddNode("coder", coder(calls)).AddValidator("lint", fail).AddValidator("test", pass).
		AddGate("lint_gate", statgraph.GateConfig[code]{Validators: []string{"lint"}, RetryTarget: "coder", MaxRetries: 3}).
		AddGate("test_gate", statgraph.GateConfig[code]{Validators: []string{"test"}, RetryTarget: "coder", MaxRetries: 1}).
		AddEdge(statgraph.Start, "coder").AddEdge("coder", "lint").AddEdge("coder", "test").
		AddEdge("lint", "lint_gate").AddEdge("test", "test_gate").
		AddEdge("lint_gate", statgraph.End).AddEdge("test_gate", statgraph.End))
	var res statgraph.Result[code]
	_, err := g.Invoke(context.Background(), code{}, statgraph.WithResult(&res))
	require.ErrorIs(t, err, statgraph.ErrMaxRetries)
	require.ErrorContains(t, err, `gate "lint_gate" after 1 retries of coder`)
	require.Equal(t, 2, calls.get("coder"), "the limit of test_gate (1) applies to coder, not lint_gate's 3")
	require.Equal(t, 1, res.Gates[0].MaxRetries)
}

func TestGateRerunFailedOnlySkipsUnchangedPassingValidator(t *testing.T) {
	tests := []struct {
		name      string
		rerun     statgraph.Rerun
		key       func(code) string
		lintCalls int
	}{
		{"failed only, key unchanged", statgraph.RerunFailedOnly, func(code) string { return "tree-1" }, 1},
		{"failed only, key changes", statgraph.RerunFailedOnly, func(s code) string { return strconv.Itoa(s.Version) }, 3},
		{"all", statgraph.RerunAll, func(code) string { return "tree-1" }, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := &counter{}
			g := mustCompile(t, fanOut(calls, statgraph.GateConfig[code]{Rerun: tc.rerun},
				func() (string, statgraph.ValidatorFunc[code], []statgraph.ValidatorOption) {
					return verdictOf(calls, "lint", true, statgraph.WithInputKey(tc.key))
				},
				func() (string, statgraph.ValidatorFunc[code], []statgraph.ValidatorOption) {
					return "test", check(calls, "test", 3), nil
				}))
			var res statgraph.Result[code]
			_, err := g.Invoke(context.Background(), code{}, statgraph.WithResult(&res))
			require.NoError(t, err)
			require.Equal(t, 3, calls.get("coder"))
			require.Equal(t, 3, calls.get("test"))
			require.Equal(t, tc.lintCalls, calls.get("lint"))
			last := res.Gates[len(res.Gates)-1]
			require.Equal(t, statgraph.GatePassed, last.Decision)
			require.Equal(t, tc.lintCalls == 1, last.Verdicts[0].Reused)
		})
	}
}

func TestGateRetryTargetsByValidator(t *testing.T) {
	tests := []struct {
		name            string
		lint, plan      []bool // verdict per round
		planner, coders int
	}{
		{"lint then plan", []bool{false, true, true}, []bool{true, false, true}, 2, 3},
		{"both at once retry only the planner", []bool{false, true}, []bool{false, true}, 2, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := &counter{}
			round := func(name string, verdicts []bool) statgraph.ValidatorFunc[code] {
				return func(context.Context, code) (statgraph.Verdict, error) {
					n := calls.inc(name)
					return statgraph.Verdict{Passed: verdicts[n-1], Feedback: name + " failed"}, nil
				}
			}
			g := mustCompile(t, statgraph.New[code]().
				AddNode("planner", func(_ context.Context, s code) (code, error) {
					calls.inc("planner")
					return s, nil
				}).
				AddNode("coder", coder(calls)).
				AddValidator("lint", round("lint", tc.lint)).AddValidator("plan_check", round("plan_check", tc.plan)).
				AddGate("gate", statgraph.GateConfig[code]{Validators: []string{"lint", "plan_check"}, RetryTarget: "coder",
					RetryTargets: map[string]string{"plan_check": "planner"}}).
				AddEdge(statgraph.Start, "planner").AddEdge("planner", "coder").
				AddEdge("coder", "lint").AddEdge("coder", "plan_check").AddEdge("lint", "gate").AddEdge("plan_check", "gate").
				AddEdge("gate", statgraph.End))
			var res statgraph.Result[code]
			_, err := g.Invoke(context.Background(), code{}, statgraph.WithResult(&res))
			require.NoError(t, err)
			require.Equal(t, tc.planner, calls.get("planner"))
			require.Equal(t, tc.coders, calls.get("coder"))
			if tc.coders == 2 {
				require.Equal(t, []string{"planner"}, res.Gates[0].Targets)
			}
		})
	}
}

func TestGateBackoffOnFakeClock(t *testing.T) {
	tests := []struct {
		name    string
		backoff statgraph.Backoff
		want    []time.Duration
	}{
		{"none", statgraph.Backoff{}, []time.Duration{0, 0, 0}},
		{"fixed", statgraph.Backoff{Kind: statgraph.BackoffFixed, Initial: time.Second}, []time.Duration{time.Second, time.Second, time.Second}},
		{"linear", statgraph.Backoff{Kind: statgraph.BackoffLinear, Initial: time.Second}, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}},
		{"exponential", statgraph.Backoff{Kind: statgraph.BackoffExponential}, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second}},
		{"exponential capped", statgraph.Backoff{Kind: statgraph.BackoffExponential, Initial: time.Second, Max: 3 * time.Second}, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				calls := &counter{}
				var starts []time.Time
				g := mustCompile(t, statgraph.New[code]().
					AddNode("clock", func(_ context.Context, s code) (code, error) {
						starts = append(starts, time.Now())
						return coder(calls)(context.Background(), s)
					}).
					AddValidator("test", check(calls, "test", 4)).
					AddGate("gate", statgraph.GateConfig[code]{Validators: []string{"test"}, RetryTarget: "clock", MaxRetries: 3, Backoff: tc.backoff}).
					AddEdge(statgraph.Start, "clock").AddEdge("clock", "test").AddEdge("test", "gate").AddEdge("gate", statgraph.End))
				_, err := g.Invoke(context.Background(), code{})
				require.NoError(t, err)
				require.Equal(t, tc.want, gaps(starts))
			})
		})
	}
}

func TestGateBackoffJitterStaysWithinBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := &counter{}
		var starts []time.Time
		g := mustCompile(t, statgraph.New[code]().
			AddNode("clock", func(_ context.Context, s code) (code, error) {
				starts = append(starts, time.Now())
				return s, nil
			}).
			AddValidator("test", check(calls, "test", 20)).
			AddGate("gate", statgraph.GateConfig[code]{Validators: []string{"test"}, RetryTarget: "clock", MaxRetries: 19,
				Backoff: statgraph.Backoff{Kind: statgraph.BackoffFixed, Initial: time.Second, Jitter: 0.2}}).
			AddEdge(statgraph.Start, "clock").AddEdge("clock", "test").AddEdge("test", "gate").AddEdge("gate", statgraph.End))
		_, err := g.Invoke(context.Background(), code{})
		require.NoError(t, err)
		distinct := map[time.Duration]bool{}
		for _, d := range gaps(starts) {
			require.GreaterOrEqual(t, d, 800*time.Millisecond)
			require.LessOrEqual(t, d, 1200*time.Millisecond)
			distinct[d] = true
		}
		require.Greater(t, len(distinct), 1, "jitter should vary the pauses")
	})
}

// seeded is the state of the Start-retry tests.
type seeded struct {
	Seed int
	Seen []int
}

func startRetryGraph(t *testing.T) *statgraph.Graph[seeded] {
	return mustCompile(t, statgraph.New[seeded]().
		AddNode("use", func(_ context.Context, s seeded) (seeded, error) {
			s.Seen = append(s.Seen, s.Seed)
			return s, nil
		}).
		AddValidator("check", func(_ context.Context, s seeded) (statgraph.Verdict, error) {
			return statgraph.Verdict{Passed: s.Seed >= 3, Feedback: "seed too small"}, nil
		}).
		AddGate("gate", statgraph.GateConfig[seeded]{Validators: []string{"check"}, RetryTarget: statgraph.Start}).
		AddEdge(statgraph.Start, "use").AddEdge("use", "check").AddEdge("check", "gate").AddEdge("gate", statgraph.End))
}

func TestGateRetryStart(t *testing.T) {
	t.Run("with a source function", func(t *testing.T) {
		calls := 0
		var res statgraph.Result[seeded]
		_, err := startRetryGraph(t).Invoke(context.Background(), seeded{}, statgraph.WithSource(func(context.Context) (seeded, error) {
			calls++
			return seeded{Seed: calls}, nil
		}), statgraph.WithResult(&res))
		require.NoError(t, err)
		require.Equal(t, 3, calls)
		require.Equal(t, []int{3}, res.State.Seen, "a fresh input replaces the state")
		require.Len(t, res.Attempts, 3)
		for i, a := range res.Attempts {
			require.Equal(t, statgraph.Start, a.Node)
			require.Equal(t, i+1, a.Output.Seed)
			require.Equal(t, i+1, a.Try)
		}
		require.Contains(t, res.Attempts[0].Feedback, "[check] seed too small")
	})
	t.Run("with a literal input", func(t *testing.T) {
		_, err := startRetryGraph(t).Invoke(context.Background(), seeded{Seed: 1})
		require.ErrorIs(t, err, statgraph.ErrNotRetryable)
		require.ErrorContains(t, err, "input is not a function and cannot be retried")
	})
	t.Run("source error", func(t *testing.T) {
		boom := errors.New("no input today")
		_, err := startRetryGraph(t).Invoke(context.Background(), seeded{}, statgraph.WithSource(func(context.Context) (seeded, error) { return seeded{}, boom }))
		require.ErrorIs(t, err, boom)
	})
}
