package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// TestEscalation runs a task with on_exhausted "ask" and MaxRetries 1: its
// first attempt fails, the failed node interrupts with an Escalation, and
// the operator's answer, given with Resume, decides what happens next. An
// answer other than retry, skip or abort asks again, as a library gate
// does, with Invalid saying why; the answer given then (then) decides.
func TestEscalation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		answer string
		then   string
		check  func(t *testing.T, out TaskState, err error, log string)
	}{{
		answer: "retry",
		check: func(t *testing.T, out TaskState, err error, log string) {
			require.NoError(t, err)
			assert.Equal(t, PhaseDone, out.Phase)
			assert.Equal(t, 1, out.RetryCount, "the count restarts at the operator's reset")
			require.Len(t, out.ErrorHistory, 2)
			assert.Contains(t, out.ErrorHistory[0], "Retry 0: ")
			assert.Equal(t, "reset by operator after 1 attempts", out.ErrorHistory[1])
			assert.Nil(t, out.FailedAt)
			assert.Len(t, out.Attempts, 2)
			assert.NotContains(t, log, "FAILED")
		},
	}, {
		answer: "skip",
		check: func(t *testing.T, out TaskState, err error, log string) {
			require.NoError(t, err)
			assert.Equal(t, PhaseSkipped, out.Phase)
			assert.Equal(t, "skip", out.Decision)
			assert.Contains(t, out.Warnings, "task t-ask skipped by operator after 1 failed attempts")
			assert.Nil(t, out.FailedAt)
			assert.Len(t, out.Attempts, 1)
		},
	}, {
		answer: "abort",
		check: func(t *testing.T, out TaskState, err error, log string) {
			require.NoError(t, err)
			assert.Equal(t, PhaseFailed, out.Phase)
			assert.Equal(t, "abort", out.Decision)
			assert.NotNil(t, out.FailedAt)
			assert.Equal(t, 1, out.RetryCount)
			assert.Contains(t, log, "task t-ask FAILED after 1 attempts")
		},
	}, {
		answer: "maybe",
		then:   "retry",
		check: func(t *testing.T, out TaskState, err error, log string) {
			require.NoError(t, err)
			assert.Equal(t, PhaseDone, out.Phase, "the answer after the refused one takes effect")
			assert.Equal(t, "reset by operator after 1 attempts", out.ErrorHistory[1])
			assert.Len(t, out.Attempts, 2)
			assert.NotContains(t, log, "FAILED")
		},
	}} {
		t.Run(tc.answer, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			ws := newWorkspace(t, "t-ask", nil)
			calls := 0
			exec := ExecutorFunc(func(_ context.Context, s TaskState) (string, error) {
				calls++
				src := stillWrong
				if calls > 1 {
					src = fixedAdd
				}
				return fmt.Sprintf("call %d", calls), os.WriteFile(filepath.Join(ws.Dir(), "add.go"), []byte(src), 0o644)
			})
			log := &syncBuffer{}
			g, err := NewGraph(Config{
				Executor: exec, Workspace: ws, Log: log,
				Verifier: ChecksVerifier{Checks: grepCheck(), Workdir: ws.Dir()},
			}, statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(true)))
			require.NoError(t, err)

			in := TaskState{Task: task("t-ask"), MaxRetries: 1}
			in.Task.OnExhausted = "ask"
			var ie statgraph.Result[TaskState]
			_, err = g.Invoke(ctx, in, statgraph.WithThread("ask"), statgraph.WithResult(&ie))
			require.ErrorIs(t, err, statgraph.ErrInterrupted, "the run pauses")
			require.Len(t, ie.Interrupts, 1)
			assert.Equal(t, NodeFailed, ie.Interrupts[0].Node)
			var esc Escalation
			require.NoError(t, json.Unmarshal(ie.Interrupts[0].Payload, &esc))
			assert.Equal(t, "t-ask", esc.Task)
			assert.Equal(t, 1, esc.Attempts)
			assert.Equal(t, []string{"retry", "skip", "abort"}, esc.Choices)
			require.NotEmpty(t, esc.Errors)
			assert.Contains(t, esc.Errors[0], "fixed")
			assert.Empty(t, log.String(), "nothing is reported failed while the operator decides")

			out, err := g.Invoke(ctx, TaskState{}, statgraph.WithThread("ask"), statgraph.WithResume(tc.answer), statgraph.WithResult(&ie))
			if tc.then != "" {
				require.ErrorIs(t, err, statgraph.ErrInterrupted, "the refused answer asks again")
				require.Len(t, ie.Interrupts, 1)
				var again Escalation
				require.NoError(t, json.Unmarshal(ie.Interrupts[0].Payload, &again))
				assert.Equal(t, `unknown answer "maybe": resume with retry, skip or abort`, again.Invalid)
				again.Invalid = ""
				assert.Equal(t, esc, again, "the same question")
				assert.Empty(t, log.String())
				out, err = g.Invoke(ctx, TaskState{}, statgraph.WithThread("ask"), statgraph.WithResume(tc.then))
			}
			tc.check(t, out, err, log.String())
		})
	}
}
