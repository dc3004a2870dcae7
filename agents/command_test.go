package agents

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// agentScript is a stand-in for a coding-agent CLI. Called as
// "script {prompt_file} {workdir} {attempt} {task_id}", it fixes add.go only
// when the prompt says this is attempt 2 and names the failing test;
// otherwise it makes a wrong change and exits 3.
const agentScript = `#!/bin/sh
prompt=$1 dir=$2 attempt=$3 task=$4
if grep -q "Attempt 2 of" "$prompt" && grep -q "TestAdd" "$prompt"; then
	cat > "$dir/add.go" <<'SRC'
%s
SRC
	echo "task $task attempt $attempt: fixed Add"
	exit 0
fi
cat > "$dir/add.go" <<'SRC'
%s
SRC
echo "task $task attempt $attempt: changed the sign"
exit 3
`

// TestCommandExecutor drives the script through the graph with the real go
// test and go vet checks: the first attempt fails, the second reads the
// feedback from its prompt file and fixes the bug.
func TestCommandExecutor(t *testing.T) {
	t.Parallel()
	ws := newWorkspace(t, "t11", nil)
	script := filepath.Join(t.TempDir(), "agent.sh")
	src := fmt.Sprintf(agentScript, strings.TrimSuffix(fixedAdd, "\n"), strings.TrimSuffix(stillWrong, "\n"))
	require.NoError(t, os.WriteFile(script, []byte(src), 0o755))
	prompts := t.TempDir()

	g, err := NewGraph(Config{
		Executor: CommandExecutor{
			Argv:    []string{script, "{prompt_file}", "{workdir}", "{attempt}", "{task_id}"},
			Workdir: ws.Dir(), PromptDir: prompts,
		},
		Verifier:  ChecksVerifier{Checks: goChecks(), Workdir: ws.Dir(), FeedbackBytes: feedbackCap},
		Workspace: ws,
	})
	require.NoError(t, err)
	out, err := g.Invoke(context.Background(), TaskState{Task: task("t11"), MaxRetries: 3})
	require.NoError(t, err)

	assert.Equal(t, PhaseDone, out.Phase)
	assert.Equal(t, 2, out.RetryCount)
	require.Len(t, out.ErrorHistory, 1)
	assert.Contains(t, out.ErrorHistory[0], "Retry 0: tests: 1 failed (TestAdd)")
	require.Len(t, out.Attempts, 2)
	assert.Equal(t, script+" exited with code 3: task t11 attempt 1: changed the sign", out.Attempts[0].Summary,
		"a failing agent command is not an error; the summary says how it ended")
	assert.Equal(t, "task t11 attempt 2: fixed Add", out.Attempts[1].Summary)
	assertCommits(t, ws, 1, 2)

	second, err := os.ReadFile(filepath.Join(prompts, "task-t11-attempt-2.md"))
	require.NoError(t, err, "the prompt file is written to PromptDir")
	assert.Contains(t, string(second), "Attempt 2 of 3")
	assert.Contains(t, string(second), strings.TrimSpace(out.Attempts[0].Feedback), "the prompt file carries the verifier's feedback")
	_, err = os.Stat(filepath.Join(ws.Dir(), "task-t11-attempt-2.md"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the prompt file stays outside the workspace")
}

func TestCommandExecutorErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		argv  []string
		want  string
		infra bool
	}{
		{"empty command", nil, "command executor: empty command", false},
		{"missing program", []string{filepath.Join(t.TempDir(), "no-such-agent"), "{prompt_file}"}, "no-such-agent cannot be started: install it or put it on PATH", true},
		{"not on PATH", []string{"statgraph-no-such-agent-cli"}, "statgraph-no-such-agent-cli cannot be started", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := CommandExecutor{Argv: tc.argv, Workdir: t.TempDir(), PromptDir: t.TempDir()}
			_, err := e.Execute(context.Background(), TaskState{Task: task("t11")})
			require.Error(t, err)
			assert.ErrorContains(t, err, tc.want)
			assert.Equal(t, tc.infra, errors.Is(err, ErrInfrastructure), "an agent CLI that cannot be started is an infrastructure error: %v", err)
		})
	}
}
