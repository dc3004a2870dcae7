package gate_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph/gate"
)

func TestPolicyDecide(t *testing.T) {
	for _, tc := range []struct {
		p        gate.Policy
		passed   bool
		attempts int
		total    int
		want     gate.Decision
	}{
		{gate.Policy{}, true, 5, 5, gate.Passed},
		{gate.Policy{}, false, 1, 1, gate.Retry},
		{gate.Policy{}, false, 2, 2, gate.Retry},
		{gate.Policy{}, false, 3, 3, gate.Failed}, // zero means DefaultMaxAttempts, 3
		{gate.Policy{MaxAttempts: 1}, false, 1, 1, gate.Failed},
		{gate.Policy{MaxAttempts: -4}, false, 1, 1, gate.Failed}, // below 1 means 1
		{gate.Policy{MaxAttempts: 1, OnExhausted: gate.Ask}, false, 1, 1, gate.Escalate},
		{gate.Policy{MaxAttempts: 2, OnExhausted: gate.Ask}, false, 1, 1, gate.Retry},
		{gate.Policy{MaxAttempts: 2}, false, 0, 0, gate.Retry}, // no attempt counted yet
		{gate.Policy{MaxTotal: 4}, false, 1, 3, gate.Retry},
		{gate.Policy{MaxTotal: 4}, false, 1, 4, gate.Failed}, // the run's cap, in a fresh retry context
		{gate.Policy{MaxTotal: 4, OnExhausted: gate.Ask}, false, 2, 5, gate.Escalate},
		{gate.Policy{MaxTotal: 4}, true, 1, 9, gate.Passed},
		{gate.Policy{MaxTotal: 0}, false, 2, 100, gate.Retry}, // zero: no cap
	} {
		require.Equal(t, tc.want, tc.p.Decide(tc.passed, tc.attempts, tc.total), "%+v passed=%v attempts=%d total=%d", tc.p, tc.passed, tc.attempts, tc.total)
	}
}

func TestParseAnswer(t *testing.T) {
	for _, s := range gate.Choices() {
		a, err := gate.ParseAnswer(s)
		require.NoError(t, err)
		require.Equal(t, s, string(a))
	}
	_, err := gate.ParseAnswer("maybe")
	require.ErrorIs(t, err, gate.ErrUnknownAnswer)
	require.EqualError(t, err, `unknown answer "maybe": resume with retry, skip or abort`)
}

func TestModeFor(t *testing.T) {
	require.Equal(t, gate.Blocking, gate.Mode("").For(gate.Critical))
	require.Equal(t, gate.Advisory, gate.Mode("").For(gate.High))
	require.Equal(t, gate.Advisory, gate.Mode("").For(gate.Medium))
	require.Equal(t, gate.Informational, gate.Mode("").For(gate.Low))
	require.Equal(t, gate.Blocking, gate.Blocking.For(gate.Low))
	require.True(t, gate.Mode("").Valid())
	require.False(t, gate.Mode("strict").Valid())
}

// TestEnforce: the failed checks are sorted by their mode, resolved from
// their severity when zero, in the order given; passed and informational
// failures are left out.
func TestEnforce(t *testing.T) {
	type check struct {
		name   string
		passed bool
		mode   gate.Mode
		sev    gate.Severity
	}
	checks := []check{
		{"default", false, "", gate.Critical},
		{"high", false, "", gate.High},
		{"passed", true, gate.Blocking, gate.Critical},
		{"low", false, "", gate.Low},
		{"blocking-low", false, gate.Blocking, gate.Low},
		{"medium", false, "", gate.Medium},
		{"informational", false, gate.Informational, gate.Critical},
		{"advisory", false, gate.Advisory, gate.Critical},
	}
	blocking, advisory := gate.Enforce(checks, func(c check) (bool, gate.Mode, gate.Severity) { return c.passed, c.mode, c.sev })
	names := func(cs []check) (out []string) {
		for _, c := range cs {
			out = append(out, c.name)
		}
		return out
	}
	require.Equal(t, []string{"default", "blocking-low"}, names(blocking))
	require.Equal(t, []string{"high", "medium", "advisory"}, names(advisory))
}
