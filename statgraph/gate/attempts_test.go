package gate_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/gate"
)

// seenBy returns a coder that records the attempt context it reads from
// the state into *seen, through a JSON round trip, as a checkpoint would
// hand it to a resumed run.
func seenBy(t *testing.T, calls *counter, seen *[]gate.Attempts) func(context.Context, code) (code, error) {
	return func(ctx context.Context, s code) (code, error) {
		a := s.Gate.Attempts("gate")
		raw, err := json.Marshal(a)
		require.NoError(t, err)
		var back gate.Attempts
		require.NoError(t, json.Unmarshal(raw, &back))
		*seen = append(*seen, back)
		return coder(calls)(ctx, s)
	}
}

// attemptGraph is coder -> test -> gate -> done, the gate recording the
// coder's version as each attempt's output.
func attemptGraph(t *testing.T, calls *counter, seen *[]gate.Attempts, testPasses int, cfg gate.Config) *statgraph.Builder[code] {
	cfg.Validators, cfg.RetryTarget, cfg.Next = []string{"test"}, "coder", "done"
	gs := gates.WithOutput(func(s code) string { return "v" + strconv.Itoa(s.Version) })
	b := statgraph.New[code]().AddNode("coder", seenBy(t, calls, seen))
	gs.AddValidator(b, "test", check(calls, "test", testPasses))
	gs.Add(b, "gate", cfg)
	return b.AddNode("done", markDone).
		AddEdge(statgraph.Start, "coder").AddEdge("coder", "test").AddEdge("test", "gate").AddEdge("done", statgraph.End)
}

// TestAttemptContext: the retried node reads Try, the earlier Tries of its
// retry context (output, verdicts, feedback), and the Hint that sent it
// back (DESIGN "Attempt context").
func TestAttemptContext(t *testing.T) {
	calls := &counter{}
	var seen []gate.Attempts
	s, err := compile(t, attemptGraph(t, calls, &seen, 3, gate.Config{})).Invoke(context.Background(), code{})
	require.NoError(t, err)
	require.True(t, s.Done)
	require.Len(t, seen, 3)

	require.Equal(t, gate.Attempts{Try: 1}, seen[0])
	require.Equal(t, 2, seen[1].Try)
	require.Equal(t, s.Seen[1], seen[1].Hint, "the hint is the feedback of the retry that caused the run")
	require.Len(t, seen[1].Tries, 1)
	first := seen[1].Tries[0]
	require.Equal(t, "v1", first.Output)
	require.Equal(t, gate.Retry, first.Decision)
	require.Equal(t, 1, first.Try)
	require.Equal(t, s.Seen[1], first.Feedback)
	require.Equal(t, 1, first.Failed())
	require.Equal(t, "test failed on version 1", first.Verdicts[0].Feedback)

	require.Equal(t, 3, seen[2].Try)
	require.Equal(t, []string{"v1", "v2"}, outputs(seen[2].Tries))
	require.Equal(t, s.Seen[2], seen[2].Hint)

	final := s.Gate.Attempts("gate")
	require.Equal(t, 1, final.Try, "a pass ends the retry context")
	require.Empty(t, final.Tries)
	require.Equal(t, []string{"v1", "v2", "v3"}, outputs(final.All))
	require.Equal(t, gate.Passed, final.All[2].Decision)
	require.Equal(t, 0, final.All[2].Failed())
}

// TestAttemptContextAcrossResets: after an escalation answered "retry" the
// node starts a new retry context (Try 1, no Tries) and All still lists
// the attempts of the first one, for best-of-N; the log is checkpointed.
func TestAttemptContextAcrossResets(t *testing.T) {
	ctx := context.Background()
	calls := &counter{}
	var seen []gate.Attempts
	g := compile(t, attemptGraph(t, calls, &seen, 4, gate.Config{Policy: gate.Policy{MaxAttempts: 2, OnExhausted: gate.Ask}}),
		statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(true)))
	var res statgraph.Result[code]
	_, err := g.Invoke(ctx, code{}, statgraph.WithThread("r"), statgraph.WithResult(&res))
	escalation(t, err, res)
	s, err := g.Invoke(ctx, code{}, statgraph.WithThread("r"), statgraph.WithResume("retry"))
	require.NoError(t, err)
	require.True(t, s.Done)
	require.Len(t, seen, 4)
	require.Equal(t, 1, seen[2].Try)
	require.Empty(t, seen[2].Tries)
	require.Contains(t, seen[2].Hint, "after the attempt count was reset")
	require.Equal(t, []string{"v1", "v2"}, outputs(seen[2].All))
	require.Equal(t, gate.Reset, seen[2].All[1].Decision)
	require.Equal(t, 2, seen[3].Try)
	require.Equal(t, []string{"v3"}, outputs(seen[3].Tries))
	require.Equal(t, []int{1, 2, 3, 4}, totals(s.Gate.Attempts("gate").All))
}

// TestAttemptLogIsCapped: the log keeps Config.KeepTries attempts of the
// gate, the newest, so the state does not grow with every retry; Try still
// counts every attempt. A negative cap keeps none.
func TestAttemptLogIsCapped(t *testing.T) {
	for _, tc := range []struct {
		keep int
		want []string
	}{{2, []string{"v4", "v5"}}, {-1, nil}} {
		calls := &counter{}
		var seen []gate.Attempts
		s, err := compile(t, attemptGraph(t, calls, &seen, 6, gate.Config{KeepTries: tc.keep, Policy: gate.Policy{MaxAttempts: 9}})).
			Invoke(context.Background(), code{})
		require.NoError(t, err)
		require.Equal(t, 6, seen[5].Try)
		require.Equal(t, tc.want, outputs(seen[5].Tries), "keep %d", tc.keep)
		require.Equal(t, tc.want, outputs(seen[5].All), "keep %d", tc.keep)
		require.Len(t, s.Gate.Tries, max(tc.keep, 0))
	}
}

func outputs(as []gate.Attempt) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Output)
	}
	return out
}

func totals(as []gate.Attempt) []int {
	var out []int
	for _, a := range as {
		out = append(out, a.Total)
	}
	return out
}

// TestGateMaxTotal: Policy.MaxTotal caps the attempts over the run: an
// operator's "retry" resets the retry context's count, not the run's, so
// the next failure past the cap escalates again at once.
func TestGateMaxTotal(t *testing.T) {
	ctx := context.Background()
	t.Run("escalates again after a reset", func(t *testing.T) {
		calls := &counter{}
		g := compile(t, pipeline(calls, 100, gate.Config{Policy: gate.Policy{MaxAttempts: 2, MaxTotal: 3, OnExhausted: gate.Ask}}),
			statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(true)))
		var res statgraph.Result[code]
		_, err := g.Invoke(ctx, code{}, statgraph.WithThread("m"), statgraph.WithResult(&res))
		require.Equal(t, 2, escalation(t, err, res).Attempts)
		_, err = g.Invoke(ctx, code{}, statgraph.WithThread("m"), statgraph.WithResume("retry"), statgraph.WithResult(&res))
		esc := escalation(t, err, res)
		require.Equal(t, 3, calls.get("coder"), "one attempt after the reset, then the run's cap")
		require.Equal(t, 1, esc.Attempts)
		require.Contains(t, esc.Feedback, "(3 attempts over the run: the cap Policy.MaxTotal)")
	})
	t.Run("fails", func(t *testing.T) {
		calls := &counter{}
		_, err := compile(t, pipeline(calls, 100, gate.Config{Policy: gate.Policy{MaxAttempts: 5, MaxTotal: 2}})).Invoke(ctx, code{})
		require.ErrorIs(t, err, gate.ErrExhausted)
		require.ErrorContains(t, err, `gate "gate" after 2 attempts of coder (2 attempts over the run: the cap Policy.MaxTotal)`)
		require.Equal(t, 2, calls.get("coder"))
	})
}
