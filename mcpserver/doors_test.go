package mcpserver_test

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

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
	"github.com/statgraph/statgraph/mcpserver"
)

// Every tool declares what it does to the user's repository and runs,
// so an MCP client knows which calls to confirm with its user. A tool
// that changes a task's outcome or a branch is destructive (answering
// "skip" makes a failed task done; pick moves the task's branch; reset
// sends failed work back); one that starts agents reaching model
// providers is also open-world. Only stop_run changes state without
// loss: its tasks are left interrupted, to continue on the next run.
func TestToolAnnotationsSayWhatEachToolDoes(t *testing.T) {
	type want struct{ readOnly, destructive, openWorld bool }
	ro, steer, change := want{readOnly: true}, want{destructive: true, openWorld: true}, want{destructive: true}
	wants := map[string]want{
		"list_tasks": ro, "get_task": ro, "status": ro, "history": ro,
		"add_task": steer, "run_pending": steer, "answer_escalation": steer, "review_task": steer,
		"land":           steer,
		"pick_candidate": change, "reset_failed": change,
		"merge_queue":    ro,
		"plan_from_spec": {openWorld: true}, "expand_task": {openWorld: true}, "analyze_complexity": {openWorld: true},
		"stop_run": {},
	}
	cs := connect(t, control.Options{File: controltest.NewPlan(t, controltest.AskPlan)})
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	for _, tool := range res.Tools {
		w, ok := wants[tool.Name]
		if !assert.True(t, ok, "tool %s has no expected annotations in this test", tool.Name) {
			continue
		}
		delete(wants, tool.Name)
		a := tool.Annotations
		require.NotNil(t, a, tool.Name)
		assert.Equal(t, w.readOnly, a.ReadOnlyHint, "%s readOnlyHint", tool.Name)
		if w.readOnly {
			continue
		}
		// The protocol's defaults are destructive and open-world: each
		// hint is stated, never left to the default.
		require.NotNil(t, a.DestructiveHint, tool.Name)
		assert.Equal(t, w.destructive, *a.DestructiveHint, "%s destructiveHint", tool.Name)
		require.NotNil(t, a.OpenWorldHint, tool.Name)
		assert.Equal(t, w.openWorld, *a.OpenWorldHint, "%s openWorldHint", tool.Name)
	}
	assert.Empty(t, wants, "tools expected but not listed")
}

// add_task refuses what the web API refuses, through the same code
// (control.AddTask): a 12 MiB title, an unknown field in the task or a
// subtask, a string over its cap, an argument the tool does not have;
// nothing is written.
func TestAddTaskCapsAndUnknownFields(t *testing.T) {
	file := controltest.NewPlan(t, controltest.AskPlan)
	cs := connect(t, control.Options{File: file})
	before, err := os.ReadFile(file)
	require.NoError(t, err)

	msg := refused(t, cs, "add_task", map[string]any{"task": map[string]any{"title": strings.Repeat("x", 12<<20)}})
	assert.Contains(t, msg, "too large")
	msg = refused(t, cs, "add_task", map[string]any{"task": map[string]any{"title": strings.Repeat("x", 2<<10)}})
	assert.Contains(t, msg, `"title" is 2048 bytes; at most 1024`)
	msg = refused(t, cs, "add_task", map[string]any{"task": map[string]any{"title": "x", "details": strings.Repeat("d", 300<<10)}})
	assert.Contains(t, msg, `"details"`)
	msg = refused(t, cs, "add_task", map[string]any{"task": map[string]any{"title": "x", "tset_cmd": "go test ./..."}})
	assert.Contains(t, msg, `unknown field "tset_cmd"`)
	assert.Contains(t, msg, "test_cmd", "the known fields are listed")
	msg = refused(t, cs, "add_task", map[string]any{"task": map[string]any{"title": "x",
		"subtasks": []any{map[string]any{"id": 1, "title": "s", "sneaky": true}}}})
	assert.Contains(t, msg, `subtasks[0]: unknown field "sneaky"`)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add_task",
		Arguments: map[string]any{"task": map[string]any{"title": "x"}, "also": 1}})
	if err == nil {
		require.True(t, res.IsError, "an argument add_task does not have: %s", text(res))
	}

	after, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "nothing was written")
}

// An MCP client cannot give a task more of the server's environment than
// the server passes to agent CLIs (statgraph mcp --allow-env): "*", the
// server's OPENAI_API_KEY, a prefix or a NAME=VALUE outside the list are
// refused with the list. A task naming an allowed variable runs, and its
// agent (a command that writes its environment to a file) gets that
// variable and not the key.
func TestAddTaskEnvWithinAllowEnv(t *testing.T) {
	const key = "sk-doors-test-server-key-0123456789"
	t.Setenv("OPENAI_API_KEY", key)
	t.Setenv("MY_AGENT_VAR", "agent-setting")
	file := controltest.NewPlan(t, `{"tasks": [{"id": 1, "title": "one", "status": "done"}]}`)
	cs := connect(t, control.Options{File: file, Run: control.RunOptions{Jobs: 1, NoSandbox: true, AllowEnv: []string{"MY_AGENT_VAR"}}})
	out := filepath.Join(t.TempDir(), "agent-env.txt")
	task := func(env ...string) map[string]any {
		return map[string]any{"task": map[string]any{"title": "print the environment",
			"executor": map[string]any{"command": []string{"sh", "-c", "env > " + out}, "env": env}}}
	}
	for _, env := range []string{"*", "OPENAI_API_KEY", "OPENAI_*", "MY_*", "OPENAI_BASE_URL=http://127.0.0.1:9/v1"} {
		msg := refused(t, cs, "add_task", task("MY_AGENT_VAR", env))
		assert.Contains(t, msg, "env[1] \""+env+"\"", env)
		assert.Contains(t, msg, "it passes only MY_AGENT_VAR (its --allow-env)", env)
	}
	added := call[mcpserver.Added](t, cs, "add_task", task("MY_AGENT_VAR", "MY_AGENT_VAR=overridden"))
	call[mcpserver.RunState](t, cs, "run_pending", nil)
	eventually(t, cs, 90*time.Second, "the run's end", func(s mcpserver.Status) bool { return !s.Run.Running })
	env, err := os.ReadFile(out)
	require.NoError(t, err, "the agent of task %s ran", added.ID)
	assert.Contains(t, string(env), "MY_AGENT_VAR=")
	assert.NotContains(t, string(env), key, "the server's key reached the agent")
}

// A client cannot reach the server's environment through what a task
// inherits either: a task with no executor of its own takes the file's
// defaults.executor, and a best-of-N task runs its candidates' executors;
// an env there beyond --allow-env refuses the task as one named in it
// would, and nothing is written. A task with an executor of its own
// within --allow-env is added.
func TestAddTaskInheritedEnvWithinAllowEnv(t *testing.T) {
	file := controltest.NewPlan(t, `{"defaults": {"executor": {"command": ["true"], "env": ["*"]}},
		"tasks": [{"id": 1, "title": "one", "status": "done"}]}`)
	cs := connect(t, control.Options{File: file, Run: control.RunOptions{Jobs: 1, NoSandbox: true, AllowEnv: []string{"MY_AGENT_VAR"}}})
	before, err := os.ReadFile(file)
	require.NoError(t, err)

	msg := refused(t, cs, "add_task", map[string]any{"task": map[string]any{"title": "inherits the defaults' executor"}})
	assert.Contains(t, msg, `would pass "*" to its agent`)
	assert.Contains(t, msg, "it passes only MY_AGENT_VAR (its --allow-env)")
	msg = refused(t, cs, "add_task", map[string]any{"task": map[string]any{"title": "a candidate's env",
		"executor":   map[string]any{"command": []string{"true"}},
		"candidates": []any{map[string]any{"executor": map[string]any{"command": []string{"true"}, "env": []string{"OPENAI_API_KEY"}}}}}})
	assert.Contains(t, msg, `would pass "OPENAI_API_KEY" to its agent`)
	after, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "nothing was written")

	call[mcpserver.Added](t, cs, "add_task", map[string]any{"task": map[string]any{"title": "its own executor",
		"executor": map[string]any{"command": []string{"true"}, "env": []string{"MY_AGENT_VAR"}}}})
}
