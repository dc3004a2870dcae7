package agents

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
	"github.com/statgraph/statgraph/verifier"
)

// fixedDiff stands in for a workspace's Diff.
type fixedDiff string

func (d fixedDiff) Diff(context.Context) (string, error) { return string(d), nil }

func TestReviewVerifier(t *testing.T) {
	pass := VerifierFunc(func(context.Context, TaskState) (verifier.Verification, error) {
		return verifier.Verification{TestsPassed: true, LintPassed: true}, nil
	})
	fail := VerifierFunc(func(context.Context, TaskState) (verifier.Verification, error) {
		return verifier.Verification{TestsPassed: false, LintPassed: true, Errors: []string{"tests: 1 failed (TestAdd)"}}, nil
	})
	s := TaskState{Task: Task{ID: "1", Title: "Fix Add"}}
	ctx := context.Background()

	t.Run("a rejection is a warning, not a failure", func(t *testing.T) {
		srv := llmtest.NewServer(t, llmtest.Text(`{"approve": false, "feedback": "Sub was changed too"}`, 10))
		v, err := ReviewVerifier{Checks: pass, Client: newClient(t, srv, &llmtest.SleepRecorder{}, nil), Workspace: fixedDiff("+x\n")}.Verify(ctx, s)
		require.NoError(t, err)
		require.True(t, v.Passed())
		require.Equal(t, []string{"review: Sub was changed too"}, v.Warnings)
	})
	t.Run("an approval adds nothing", func(t *testing.T) {
		srv := llmtest.NewServer(t, llmtest.Text(`{"approve": true, "feedback": "ok"}`, 10))
		v, err := ReviewVerifier{Checks: pass, Client: newClient(t, srv, &llmtest.SleepRecorder{}, nil), Workspace: fixedDiff("+x\n")}.Verify(ctx, s)
		require.NoError(t, err)
		require.Empty(t, v.Warnings)
		require.Equal(t, 1, srv.Count())
	})
	t.Run("failing checks are not reviewed", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		v, err := ReviewVerifier{Checks: fail, Client: newClient(t, srv, &llmtest.SleepRecorder{}, nil), Workspace: fixedDiff("+x\n")}.Verify(ctx, s)
		require.NoError(t, err)
		require.False(t, v.Passed())
		require.Equal(t, 0, srv.Count())
	})
	t.Run("an empty diff is not reviewed", func(t *testing.T) {
		srv := llmtest.NewServer(t)
		_, err := ReviewVerifier{Checks: pass, Client: newClient(t, srv, &llmtest.SleepRecorder{}, nil), Workspace: fixedDiff("")}.Verify(ctx, s)
		require.NoError(t, err)
		require.Equal(t, 0, srv.Count())
	})
	t.Run("a review that cannot be had is a warning", func(t *testing.T) {
		srv := llmtest.NewServer(t, llmtest.Error(401, "bad key", "invalid_api_key"))
		v, err := ReviewVerifier{Checks: pass, Client: newClient(t, srv, &llmtest.SleepRecorder{}, nil), Workspace: fixedDiff("+x\n")}.Verify(ctx, s)
		require.NoError(t, err)
		require.True(t, v.Passed())
		require.Len(t, v.Warnings, 1)
		require.Contains(t, v.Warnings[0], "review: not done")
	})
	t.Run("check errors pass through", func(t *testing.T) {
		boom := errors.New("cannot run")
		broken := VerifierFunc(func(context.Context, TaskState) (verifier.Verification, error) { return verifier.Verification{}, boom })
		_, err := ReviewVerifier{Checks: broken, Workspace: fixedDiff("+x\n")}.Verify(ctx, s)
		require.ErrorIs(t, err, boom)
	})
}
