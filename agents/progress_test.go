package agents

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoProgress has an executor change add.go on attempt 1, change nothing
// on attempts 2 and 3, and fix it on attempt 4: the two idle attempts are
// recorded as "no progress" in the history, and the next attempt is told.
func TestNoProgress(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "t-idle", nil)
	var feedback []string
	exec := ExecutorFunc(func(_ context.Context, s TaskState) (string, error) {
		feedback = append(feedback, s.Verification.Feedback)
		switch s.RetryCount + 1 {
		case 1:
			return "changed the sign", os.WriteFile(filepath.Join(ws.Dir(), "add.go"), []byte(stillWrong), 0o644)
		case 4:
			return "fixed Add", os.WriteFile(filepath.Join(ws.Dir(), "add.go"), []byte(fixedAdd), 0o644)
		}
		return "looked around", nil
	})
	g, err := NewGraph(Config{
		Executor: exec, Workspace: ws,
		Verifier: ChecksVerifier{Checks: grepCheck(), Workdir: ws.Dir()},
	})
	require.NoError(t, err)
	out, err := g.Invoke(context.Background(), TaskState{Task: task("t-idle"), MaxRetries: 4})
	require.NoError(t, err)

	assert.Equal(t, PhaseDone, out.Phase)
	assert.Equal(t, 4, out.RetryCount)
	require.Len(t, out.ErrorHistory, 3)
	assert.NotContains(t, out.ErrorHistory[0], "no progress")
	for _, k := range []int{1, 2} {
		assert.True(t, strings.HasPrefix(out.ErrorHistory[k], fmt.Sprintf("Retry %d: no progress", k)), "entry %d: %q", k, out.ErrorHistory[k])
		assert.Contains(t, out.ErrorHistory[k], "fixed", "the check's own error follows")
	}
	require.Len(t, feedback, 4)
	assert.Empty(t, feedback[0])
	assert.NotContains(t, feedback[1], "no progress")
	assert.True(t, strings.HasPrefix(feedback[2], "no progress"), "feedback of attempt 3: %q", feedback[2])
	assert.True(t, strings.HasPrefix(feedback[3], "no progress"), "feedback of attempt 4: %q", feedback[3])

	var flags []bool
	for _, a := range out.Attempts {
		flags = append(flags, a.NoProgress)
	}
	assert.Equal(t, []bool{false, true, true, false}, flags)
	assert.Equal(t, out.Attempts[0].Tree, out.Attempts[2].Tree)
	assert.NotEqual(t, out.Attempts[2].Tree, out.Attempts[3].Tree)
	assertCommits(t, ws, 1, 4)
}

// TestNoProgressFirstAttempt: a first attempt that leaves the workspace as
// it was is no progress too.
func TestNoProgressFirstAttempt(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "t-idle1", nil)
	g, err := NewGraph(Config{
		Executor:  ExecutorFunc(func(context.Context, TaskState) (string, error) { return "nothing to do", nil }),
		Verifier:  ChecksVerifier{Checks: grepCheck(), Workdir: ws.Dir()},
		Workspace: ws,
	})
	require.NoError(t, err)
	out, err := g.Invoke(context.Background(), TaskState{Task: task("t-idle1"), MaxRetries: 1})
	require.NoError(t, err)
	assert.Equal(t, PhaseFailed, out.Phase)
	require.Len(t, out.ErrorHistory, 1)
	assert.True(t, strings.HasPrefix(out.ErrorHistory[0], "Retry 0: no progress"), "%q", out.ErrorHistory[0])
	assert.True(t, out.Attempts[0].NoProgress)
	assertCommits(t, ws)
}
