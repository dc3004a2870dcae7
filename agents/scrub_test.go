package agents

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/secret"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/verifier"
)

// TestCheckpointsCarryNoSecret: an executor and a verifier that put a
// registered secret into their summary, errors and feedback (encoded, as a
// hostile test would print it) leave no form of it in the returned state,
// in any checkpoint, or in a node's error.
func TestCheckpointsCarryNoSecret(t *testing.T) {
	const key = "sk-agents-canary-8a41f2c9"
	secret.Register("STATGRAPH_AGENTS_TEST_KEY", key)
	b64 := base64.StdEncoding.EncodeToString([]byte("OPENAI_API_KEY=" + key))
	rev := []byte(key)
	slices.Reverse(rev)
	cfg := Config{
		Executor: ExecutorFunc(func(_ context.Context, s TaskState) (string, error) {
			return "wrote " + hex.EncodeToString([]byte(key)), nil
		}),
		Verifier: VerifierFunc(func(_ context.Context, s TaskState) (verifier.Verification, error) {
			return verifier.Verification{
				Errors:   []string{"tests: leaked " + string(rev)},
				Feedback: "environ: " + b64,
				Warnings: []string{"saw " + key},
			}, nil
		}),
	}
	cp := statgraph.NewMemoryCheckpointer(true)
	g, err := NewGraph(cfg, statgraph.WithCheckpointer(cp))
	require.NoError(t, err)
	ctx := context.Background()
	out, err := g.Invoke(ctx, TaskState{Task: Task{ID: "s1", Title: "leak"}, MaxRetries: 2}, statgraph.WithThread("s1"))
	require.NoError(t, err)
	assert.Equal(t, PhaseFailed, out.Phase)
	require.Len(t, out.ErrorHistory, 2)
	assert.Contains(t, out.ErrorHistory[0], "leaked [REDACTED]")

	forms := secret.Forms(key)
	var all strings.Builder
	for _, s := range append(out.ErrorHistory, out.Warnings...) {
		all.WriteString(s + "\n")
	}
	for _, a := range out.Attempts {
		all.WriteString(a.Summary + "\n" + a.Feedback + "\n" + strings.Join(a.Errors, "\n"))
	}
	cps, err := cp.Range(ctx, "s1", 0, 0, 0)
	require.NoError(t, err)
	require.NotEmpty(t, cps)
	for _, c := range cps {
		for _, f := range forms {
			assert.False(t, bytes.Contains(c.State, []byte(f)), "checkpoint %d holds %q", c.ID, f)
		}
	}
	for _, f := range forms {
		assert.NotContains(t, all.String(), f)
	}

	// A node's error is scrubbed too, and still unwraps.
	boom := errors.New("executor crashed printing " + key)
	cfg.Executor = ExecutorFunc(func(context.Context, TaskState) (string, error) { return "", boom })
	g, err = NewGraph(cfg)
	require.NoError(t, err)
	_, err = g.Invoke(ctx, TaskState{Task: Task{ID: "s2"}})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), key)
	assert.ErrorIs(t, err, boom)
}

// TestCommittedSecretIsAWarning: an attempt that leaves a secret in a
// file gets it replaced in the commit, and the task's warnings and log say
// which file.
func TestCommittedSecretIsAWarning(t *testing.T) {
	const key = "sk-agents-commit-canary-4410"
	secret.Register("STATGRAPH_AGENTS_COMMIT_KEY", key)
	ws := newWorkspace(t, "s3", nil)
	log := &syncBuffer{}
	cfg := Config{
		Executor: ExecutorFunc(func(context.Context, TaskState) (string, error) {
			return "wrote leak.txt", ws.FS().WriteFile("leak.txt", "key="+key+"\n")
		}),
		Verifier: VerifierFunc(func(context.Context, TaskState) (verifier.Verification, error) {
			return verifier.Verification{TestsPassed: true, LintPassed: true}, nil
		}),
		Workspace: ws,
		Log:       log,
	}
	g, err := NewGraph(cfg)
	require.NoError(t, err)
	out, err := g.Invoke(context.Background(), TaskState{Task: Task{ID: "s3"}})
	require.NoError(t, err)
	want := "attempt 1: a secret was replaced by [REDACTED] in leak.txt before committing"
	assert.Contains(t, out.Warnings, want)
	assert.Contains(t, log.String(), "task s3 warning: "+want)
	d, err := ws.DiffCommit(context.Background(), out.Attempts[0].Commit)
	require.NoError(t, err)
	assert.Contains(t, d, "+key=[REDACTED]")
	assert.NotContains(t, d, key)
}

// BenchmarkScrubState measures what scrubbing costs each node of a task
// with a secret registered: a state of three attempts with 8 KiB of
// feedback each, holding no secret (the common case).
func BenchmarkScrubState(b *testing.B) {
	secret.Register("STATGRAPH_AGENTS_BENCH_KEY", "sk-agents-bench-canary-77d0")
	s := TaskState{Task: Task{ID: "b1", Title: "bench"}}
	for i := range 3 {
		fb := strings.Repeat("--- FAIL: TestX (0.00s)\n    x_test.go:12: got 3, want 4\n", 8<<10/56)
		s.Attempts = append(s.Attempts, Attempt{N: i + 1, Summary: "changed x.go", Feedback: fb, Errors: []string{"tests: 1 failed (TestX)"}})
		s.ErrorHistory = append(s.ErrorHistory, "Retry 0: tests: 1 failed (TestX)")
	}
	s.Verification.Feedback = s.Attempts[2].Feedback
	for b.Loop() {
		_ = scrubState(s)
	}
}
