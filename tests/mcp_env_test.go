package tests

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statgraph mcp --allow-env, over stdio, with OPENAI_API_KEY in the
// server's environment (taken out of it at start-up, kept for agents that
// name it): add_task with "env": ["*"] is refused with what is allowed;
// a task naming the allowed variable runs through run_pending, and its
// agent, a command writing its environment to a file, has that variable
// and not the key.
func TestMCPAllowEnvKeepsTheServersKey(t *testing.T) {
	t.Parallel()
	const key = "sk-mcp-e2e-server-key-0123456789abcdef"
	repo := newRepo(t, map[string]string{"tasks.json": `{"tasks": [{"id": 1, "title": "one", "status": "done"}]}` + "\n"})
	file := filepath.Join(repo, "tasks.json")
	out := filepath.Join(t.TempDir(), "agent-env.txt")
	cs, stderr := mcpSessionEnv(t, repo, []string{"OPENAI_API_KEY=" + key, "MY_AGENT_VAR=agent-setting"},
		"--allow-env", "MY_AGENT_VAR", noSandbox, file)
	defer cs.Close()
	task := func(env ...string) map[string]any {
		return map[string]any{"task": map[string]any{"title": "print the environment",
			"executor": map[string]any{"command": []string{"sh", "-c", "env > " + out}, "env": env}}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add_task", Arguments: task("*")})
	require.NoError(t, err)
	require.True(t, res.IsError, "env [\"*\"] from a client must be refused; stderr:\n%s", stderr)
	msg := res.Content[0].(*mcp.TextContent).Text
	assert.Contains(t, msg, `env[0] "*"`)
	assert.Contains(t, msg, "it passes only MY_AGENT_VAR (its --allow-env)")

	var added struct{ ID string }
	mcpCall(t, cs, "add_task", task("MY_AGENT_VAR"), &added)
	var run struct{ Running bool }
	mcpCall(t, cs, "run_pending", nil, &run)
	mcpWaitRun(t, cs)
	env, err := os.ReadFile(out)
	require.NoError(t, err, "task %s's agent ran; stderr:\n%s", added.ID, stderr)
	assert.Contains(t, string(env), "MY_AGENT_VAR=agent-setting")
	assert.NotContains(t, string(env), key)
	assert.False(t, strings.Contains(string(env), "OPENAI_API_KEY"), "the key's name reached the agent")
}
