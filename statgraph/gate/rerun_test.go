package gate_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/gate"
)

// byVersionAfter keys a check on the version, but only from version from
// on: before, the key stays "same", as when the coder does not touch what
// the check reads.
func byVersionAfter(from int) func(code) string {
	return func(s code) string {
		if s.Version < from {
			return "same"
		}
		return strconv.Itoa(s.Version)
	}
}

// TestValidatorRerunsFailedOnly: a validator with an InputKey whose last
// verdict passed is not run again while its key is unchanged (Rerun
// FailedOnly); its verdict is recorded again, marked Reused. A changed key
// runs it, and so does a failed verdict with the same key.
func TestValidatorRerunsFailedOnly(t *testing.T) {
	t.Run("passing verdict kept while the key is unchanged", func(t *testing.T) {
		calls := &counter{}
		b := statgraph.New[code]().AddNode("coder", coder(calls))
		gates.AddValidator(b, "review", check(calls, "review", 1), gates.InputKey(byVersionAfter(3)))
		gates.AddValidator(b, "test", check(calls, "test", 4))
		gates.Add(b, "gate", gate.Config{Validators: []string{"review", "test"}, RetryTarget: "coder", Next: statgraph.End,
			Policy: gate.Policy{MaxAttempts: 5}})
		b.AddEdge(statgraph.Start, "coder").AddEdge("coder", "review").AddEdge("review", "test").AddEdge("test", "gate")
		s, err := compile(t, b).Invoke(context.Background(), code{})
		require.NoError(t, err)
		require.Equal(t, 4, calls.get("coder"))
		require.Equal(t, 3, calls.get("review"), "run on version 1, kept on 2, run on 3 and 4 (new keys)")
		reused := func(i int) bool { return s.Gate.Tries[i].Verdicts[0].Reused }
		require.Equal(t, []bool{false, true, false, false}, []bool{reused(0), reused(1), reused(2), reused(3)})
		require.Equal(t, []gate.Verdict{{Validator: "review", Passed: true, Mode: gate.Blocking, Key: "4"}}, s.Gate.Kept)
	})
	t.Run("failed verdict rerun with the same key", func(t *testing.T) {
		calls := &counter{}
		b := statgraph.New[code]().AddNode("coder", coder(calls))
		gates.AddValidator(b, "review", check(calls, "review", 2), gates.InputKey(func(code) string { return "same" }))
		gates.Add(b, "gate", gate.Config{Validators: []string{"review"}, RetryTarget: "coder", Next: statgraph.End})
		b.AddEdge(statgraph.Start, "coder").AddEdge("coder", "review").AddEdge("review", "gate")
		_, err := compile(t, b).Invoke(context.Background(), code{})
		require.NoError(t, err)
		require.Equal(t, 2, calls.get("review"))
	})
	t.Run("key of another state type", func(t *testing.T) {
		other := gate.For(func(s *struct{ G gate.State }) *gate.State { return &s.G })
		b := statgraph.New[code]().AddNode("coder", coder(&counter{}))
		gates.AddValidator(b, "review", check(&counter{}, "review", 1), other.InputKey(func(struct{ G gate.State }) string { return "" }))
		gates.Add(b, "gate", gate.Config{Validators: []string{"review"}, RetryTarget: "coder", Next: statgraph.End})
		b.AddEdge(statgraph.Start, "coder").AddEdge("coder", "review").AddEdge("review", "gate")
		_, err := compile(t, b).Invoke(context.Background(), code{})
		require.ErrorContains(t, err, `validator "review": its InputKey is nil or was made by a Gates of another state type`)
	})
}

// mergeReducer is a graph reducer for code whose State field merges with
// gate.Merge; the other fields come from the update (every node returns a
// whole state).
func mergeReducer(cur, upd code) code {
	g := gate.Merge(cur.Gate, upd.Gate)
	if upd.Version != 0 || upd.Done {
		cur = upd
	}
	cur.Gate = g
	return cur
}

// TestKeptVerdictsMergeInParallel: validators with input keys running in
// one step each keep their own verdict through Merge, so a passing one is
// not run again when another failed.
func TestKeptVerdictsMergeInParallel(t *testing.T) {
	calls := &counter{}
	b := statgraph.New[code]().AddNode("coder", coder(calls)).SetReducer(mergeReducer)
	names := []string{"lint", "review", "test", "vet"}
	for i, name := range names {
		gates.AddValidator(b, name, check(calls, name, 1+i%2*2), gates.InputKey(func(code) string { return "same" }))
		b.AddEdge("coder", name).AddEdge(name, "gate")
	}
	gates.Add(b, "gate", gate.Config{Validators: names, RetryTarget: "coder", Next: statgraph.End})
	b.AddEdge(statgraph.Start, "coder")
	s, err := compile(t, b).Invoke(context.Background(), code{})
	require.NoError(t, err)
	require.Equal(t, 3, calls.get("coder"))
	require.Equal(t, 1, calls.get("lint"), "passed once, kept")
	require.Equal(t, 1, calls.get("test"), "passed once, kept")
	require.Equal(t, 3, calls.get("review"))
	require.Equal(t, 3, calls.get("vet"))
	require.Len(t, s.Gate.Kept, 4)
}
