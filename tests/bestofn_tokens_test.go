package tests

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// candidateTokenTasks is tokenTasks as two candidates: 1, the scripted
// model (passes on its second attempt, wantTokens), and 2, a command that
// waits until the file release exists and then does nothing (it fails its
// checks). An advisory check fails for both, so that candidate 1 does not
// win outright and the run waits for candidate 2.
func candidateTokenTasks(release string) string {
	script, _ := json.Marshal(`i=0; while [ ! -f "$0" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; touch "$0.started"`)
	arg, _ := json.Marshal(release)
	return `{"tasks": [{"id": 1, "title": "Write the attempt", "max_retries": 3,
  "test_cmd": "grep -q 'attempt 2' out.txt",
  "checks": [{"name": "style", "cmd": "false", "mode": "advisory"}],
  "candidates": [{"model": "scripted"}, {"executor": {"command": ["sh", "-c", ` + string(script) + `, ` + string(arg) + `]}}]}]}
`
}

// TestBestOfNTokensSurviveResume runs a best-of-N task twice on the same
// scripted model: uninterrupted, and killed with SIGKILL after candidate 1
// ended (its branch published) while candidate 2 still runs, then
// resumed. The resumed task's spend, in the run's summary and in the run
// store (statgraph status), is the uninterrupted one, which holds
// candidate 1's: the candidates' earlier tokens are restored into the
// task's budget, and candidate 1 is not run again.
func TestBestOfNTokensSurviveResume(t *testing.T) {
	t.Parallel()
	tokens := func(t *testing.T, kill bool) (summary, status string, calls int) {
		m := newTokenModel(t)
		release := filepath.Join(t.TempDir(), "release")
		dir := newRepo(t, map[string]string{"tasks.json": candidateTokenTasks(release)})
		args := []string{"run", noSandbox, "--model", "scripted", "tasks.json"}
		if kill {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd, _, stderr := command(ctx, dir, args...)
			cmd.Env = childEnv(m.env()...)
			require.NoError(t, cmd.Start())
			branch := planOf(t, dir, "tasks.json", "").CandidateBranch("1", 1)
			for exec.Command("git", "-C", dir, "rev-parse", "--verify", "-q", "refs/heads/"+branch).Run() != nil {
				require.NoError(t, ctx.Err(), "candidate 1 never ended; stderr:\n%s", stderr)
				time.Sleep(100 * time.Millisecond)
			}
			require.NoError(t, syscall.Kill(cmd.Process.Pid, syscall.SIGKILL))
			_ = cmd.Wait()
			args[0] = "resume"
			calls = len(m.Requests())
		}
		require.NoError(t, os.WriteFile(release, nil, 0o644))
		r := statgraphEnv(t, dir, m.env(), args...)
		require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		require.FileExists(t, release+".started", "candidate 2 ran to its end")
		st := statgraph(t, dir, "status", "tasks.json")
		require.Equal(t, 0, st.code, "stdout:\n%s\nstderr:\n%s", st.stdout, st.stderr)
		return column(t, r.stdout, "1", "TOKENS"), column(t, st.stdout, "1", "TOKENS"), len(m.Requests()) - calls
	}
	wantSummary, wantStatus, _ := tokens(t, false)
	n, err := strconv.Atoi(wantSummary)
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, wantTokens, "the task's spend holds candidate 1's")
	assert.Equal(t, wantSummary, wantStatus, "the run store keeps the task's spend, every candidate's")

	summary, status, after := tokens(t, true)
	assert.Equal(t, wantSummary, summary, "tokens in the resumed run's summary")
	assert.Equal(t, wantStatus, status, "tokens in the run store after the resume")
	assert.Zero(t, after, "no model call after the kill: candidate 1 ended before it and is not run again")
}
