package statgraph_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// escalation returns the Escalation payload of an interrupted run.
func escalation(t *testing.T, err error) statgraph.Escalation {
	t.Helper()
	var ie *statgraph.InterruptedError
	require.True(t, errors.As(err, &ie), "got %v; want *InterruptedError", err)
	require.Len(t, ie.Interrupts, 1)
	require.Equal(t, "gate", ie.Interrupts[0].Node)
	var esc statgraph.Escalation
	require.NoError(t, json.Unmarshal(ie.Interrupts[0].Payload, &esc))
	return esc
}

func TestGateEscalation(t *testing.T) {
	ctx := context.Background()
	// testPasses: the test validator passes from this call on; MaxRetries 1
	// exhausts the gate after two failed runs.
	setup := func(t *testing.T, testPasses int) (*statgraph.Graph[code], *counter) {
		calls := &counter{}
		g := mustCompile(t, note000(calls, testPasses, statgraph.GateConfig[code]{MaxRetries: 1, OnExhausted: statgraph.Escalate, Hints: []string{"read the test"}}),
			statgraph.WithCheckpointer(&statgraph.MemoryCheckpointer{Encode: true}))
		_, err := g.Invoke(ctx, code{}, statgraph.WithThread("t"))
		esc := escalation(t, err)
		require.Equal(t, []string{"retry", "skip", "abort"}, esc.Choices)
		require.Equal(t, 1, esc.Retries)
		require.Equal(t, 1, esc.MaxRetries)
		require.Equal(t, []string{"read the test"}, esc.Hints)
		require.Len(t, esc.Failed, 1)
		require.Equal(t, "test", esc.Failed[0].Validator)
		require.Contains(t, esc.Feedback, "All 2 attempts failed")
		require.Equal(t, 2, calls.get("coder"))
		return g, calls
	}
	t.Run("retry resets the count", func(t *testing.T) {
		g, calls := setup(t, 4)
		out, err := g.Invoke(ctx, code{}, statgraph.WithThread("t"), statgraph.WithResume("retry"))
		require.NoError(t, err)
		require.True(t, out.Done)
		require.Equal(t, 4, calls.get("coder"))
		require.Equal(t, []int{1, 2, 1, 2}, out.Tries, "the reset starts a new retry context")
		require.Contains(t, out.Hints[2], "Attempt 1 of 2 after the retry count was reset")
		snap, err := g.State(ctx, "t")
		require.NoError(t, err)
		var decisions []statgraph.GateDecision
		for _, o := range snap.Gates {
			decisions = append(decisions, o.Decision)
		}
		require.Equal(t, []statgraph.GateDecision{statgraph.GateRetry, statgraph.GateReset, statgraph.GateRetry, statgraph.GateRetry, statgraph.GatePassed}, decisions)
	})
	t.Run("skip continues with a warning", func(t *testing.T) {
		g, calls := setup(t, 100)
		out, err := g.Invoke(ctx, code{}, statgraph.WithThread("t"), statgraph.WithResume("skip"))
		require.NoError(t, err)
		require.True(t, out.Done)
		require.False(t, out.Passed)
		require.Equal(t, 2, calls.get("coder"))
		snap, err := g.State(ctx, "t")
		require.NoError(t, err)
		require.Len(t, snap.Warnings, 1)
		require.Equal(t, "gate skipped after 2 failed attempts: test", snap.Warnings[0].Message)
	})
	t.Run("abort ends the run", func(t *testing.T) {
		g, calls := setup(t, 100)
		out, err := g.Invoke(ctx, code{}, statgraph.WithThread("t"), statgraph.WithResume("abort"))
		require.ErrorIs(t, err, statgraph.ErrAborted)
		require.ErrorContains(t, err, `gate "gate": the escalation after 1 retries of coder was answered "abort"`)
		require.False(t, out.Done)
		require.Equal(t, 2, calls.get("coder"))
	})
	t.Run("another answer asks again", func(t *testing.T) {
		g, _ := setup(t, 100)
		_, err := g.Invoke(ctx, code{}, statgraph.WithThread("t"), statgraph.WithResume("maybe"))
		esc := escalation(t, err)
		require.Equal(t, `the answer "maybe" is not one of retry, skip, abort`, esc.Invalid)
		_, err = g.Invoke(ctx, code{}, statgraph.WithThread("t"), statgraph.WithResume("abort"))
		require.ErrorIs(t, err, statgraph.ErrAborted)
	})
}

func TestGateKillAndResumeKeepsCounts(t *testing.T) {
	ctx := context.Background()
	calls := &counter{}
	crash := true
	b := statgraph.New[code]().
		AddNode("coder", func(ctx context.Context, s code) (code, error) {
			if calls.inc("coder") == 2 && crash {
				crash = false
				return s, errors.New("killed")
			}
			a := statgraph.Attempts[code](ctx)
			s.Version++
			s.Hints = append(s.Hints, a.Hint)
			s.Tries = append(s.Tries, a.Try)
			return s, nil
		}).
		AddValidator("review", check(calls, "review", 1)).
		AddValidator("test", check(calls, "test", 3)).
		AddGate("gate", statgraph.GateConfig[code]{Validators: []string{"review", "test"}, RetryTarget: "coder", Record: recordOutcome}).
		AddNode("done", markDone).
		AddEdge(statgraph.Start, "coder").AddEdge("coder", "review").AddEdge("review", "test").AddEdge("test", "gate").
		AddEdge("gate", "done").AddEdge("done", statgraph.End)
	cp := &statgraph.MemoryCheckpointer{Encode: true}
	g := mustCompile(t, b, statgraph.WithCheckpointer(cp))
	_, err := g.Invoke(ctx, code{}, statgraph.WithThread("k"))
	require.ErrorContains(t, err, "killed")

	// A new process: a fresh graph on the same store continues the thread.
	g = mustCompile(t, b, statgraph.WithCheckpointer(cp))
	var res statgraph.Result[code]
	_, err = g.Invoke(ctx, code{}, statgraph.WithThread("k"), statgraph.WithResult(&res))
	require.NoError(t, err)
	require.True(t, res.State.Done)
	require.Equal(t, 2, res.State.RetryCount, "the retry before the kill still counts")
	require.Equal(t, []int{1, 2, 3}, res.State.Tries)
	require.Contains(t, res.State.Hints[1], "Attempt 2 of 3")
	require.Equal(t, 4, calls.get("coder"), "three runs plus the killed one")
	require.Equal(t, 3, calls.get("test"))
	require.Len(t, res.Gates, 3)
	require.Len(t, res.Attempts, 3)
}
