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

	"github.com/statgraph/statgraph/internal/secret"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/verifier"
)

// TestAttemptKeepsAgentLogTail runs a real agent script through the graph
// with a SQLite run store: the attempt's record, as checkpointed,
// holds the end of what the agent printed (its last line, not its first),
// at most MaxLogTail bytes, with a registered secret replaced.
func TestAttemptKeepsAgentLogTail(t *testing.T) {
	t.Parallel()
	const key = "sk-agents-logtail-canary-4c1f"
	secret.Register("STATGRAPH_AGENTS_LOGTAIL_KEY", key)
	ws := newWorkspace(t, "t40", nil)
	script := filepath.Join(t.TempDir(), "agent.sh")
	src := fmt.Sprintf(`#!/bin/sh
i=1
while [ $i -le 3000 ]; do echo "agent line $i"; i=$((i+1)); done
echo "using key %s"
cat > "$1/add.go" <<'SRC'
%s
SRC
echo "agent done: fixed Add"
`, key, strings.TrimSuffix(fixedAdd, "\n"))
	require.NoError(t, os.WriteFile(script, []byte(src), 0o755))
	cp, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "runs.db"))
	require.NoError(t, err)
	defer cp.Close()
	g, err := NewGraph(Config{
		Executor:  CommandExecutor{Argv: []string{script, "{workdir}"}, Workdir: ws.Dir(), PromptDir: t.TempDir()},
		Verifier:  ChecksVerifier{Checks: []verifier.Check{{Name: "ok", Command: verifier.Command{Argv: []string{"true"}}}}, Workdir: ws.Dir()},
		Workspace: ws,
	}, statgraph.WithCheckpointer(cp))
	require.NoError(t, err)
	thread := statgraph.WithThread("t40")
	_, err = g.Invoke(context.Background(), TaskState{Task: task("t40"), MaxRetries: 1}, thread)
	require.NoError(t, err)
	snap, err := g.State(context.Background(), "t40")
	require.NoError(t, err)
	require.Len(t, snap.State.Attempts, 1)
	log := snap.State.Attempts[0].Log
	assert.LessOrEqual(t, len(log), MaxLogTail)
	assert.Greater(t, len(log), MaxLogTail/2, "the tail should fill most of its bound")
	assert.True(t, strings.HasSuffix(log, "agent done: fixed Add"), "log tail %q", log[max(0, len(log)-200):])
	assert.Contains(t, log, "using key "+secret.Marker)
	assert.NotContains(t, log, key)
	assert.NotContains(t, log, "agent line 1\n")
	assert.True(t, strings.HasPrefix(log, "agent line "), "the tail starts at a line: %q", log[:40])
}

// TestLLMAttemptKeepsLastReply: an LLM executor's attempt records the
// model's last reply, its tool calls named.
func TestLLMAttemptKeepsLastReply(t *testing.T) {
	t.Parallel()
	r := newRig(t, "t41", rigOptions{}, planAnswer(), fixAnswer)
	out, err := r.run(t, "t41", 1)
	require.NoError(t, err)
	require.Len(t, out.Attempts, 1)
	assert.Contains(t, out.Attempts[0].Log, "→ write_file")
	assert.Contains(t, out.Attempts[0].Log, `→ finish {"summary":"Add adds now"}`)
}

// TestLogTailBounds: a tail is cut at a line start near its beginning, and
// never inside a UTF-8 sequence when no line start is near.
func TestLogTailBounds(t *testing.T) {
	assert.Equal(t, "short", logTail("short\n\n"))
	long := strings.Repeat("é", MaxLogTail) // 2 bytes each, no newline
	got := logTail(long)
	assert.LessOrEqual(t, len(got), MaxLogTail)
	assert.True(t, strings.HasPrefix(got, "é"))
	lines := strings.Repeat("x", MaxLogTail) + "\nlast"
	assert.Equal(t, "last", logTail(lines)[len(logTail(lines))-4:])
}
