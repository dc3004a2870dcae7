package tasks

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

// TestExecutorPresetsMatchAgents: the names tasks.json accepts are exactly
// the presets the agents package can run.
func TestExecutorPresetsMatchAgents(t *testing.T) {
	assert.Equal(t, agents.PresetNames(), ExecutorPresets)
}

func TestExecutorForms(t *testing.T) {
	for _, tc := range []struct {
		name, executor string
		want           Executor
	}{
		{"preset by name", `"claude"`, Executor{Preset: "claude"}},
		{"preset adjusted", `{"preset": "qwen", "timeout": "1h", "env": ["HOME=/tmp/q"]}`, Executor{Preset: "qwen", Timeout: time.Hour, Env: []string{"HOME=/tmp/q"}}},
		{"command with everything", `{"command": ["agent", "--msg", "{prompt}"], "stdin": true, "timeout": "90s", "env": ["AGENT_*", "A=b"]}`,
			Executor{Command: []string{"agent", "--msg", "{prompt}"}, Stdin: true, Timeout: 90 * time.Second, Env: []string{"AGENT_*", "A=b"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse("tasks.json", []byte(`{"tasks": [{"id": 1, "title": "t", "executor": `+tc.executor+`}]}`), "")
			require.NoError(t, err)
			assert.Equal(t, tc.want, f.Tasks[0].Executor)
			assert.False(t, f.Tasks[0].Executor.IsLLM())
		})
	}
	for _, tc := range []struct{ name, executor, want string }{
		{"unknown preset", `{"preset": "cursor"}`, `unknown executor preset "cursor" (known: aider, claude, codex, gemini, opencode, qwen)`},
		{"both", `{"preset": "codex", "command": ["x"]}`, `executor has both "command" and "preset"`},
		{"bad timeout", `{"command": ["x"], "timeout": "soon"}`, `executor timeout "soon" is not a positive duration`},
		{"bad env", `{"command": ["x"], "env": ["=x"]}`, `env[0] "=x" is not a variable name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("tasks.json", []byte(`{"tasks": [{"id": 1, "title": "t", "executor": `+tc.executor+`}]}`), "")
			require.Error(t, err)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// TestPreflightModel: the preflight's request to the model server, against
// the scripted server, which lists llmtest.Model.
func TestPreflightModel(t *testing.T) {
	srv := llmtest.NewServer(t)
	f, err := Parse("tasks.json", []byte(`{"tasks": [{"id": 1, "title": "t"}, {"id": 2, "title": "done already", "status": "done", "executor": "codex"}]}`), "")
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, Preflight(ctx, f, t.TempDir(), llm.Config{Model: llmtest.Model, BaseURL: srv.BaseURL()}, srv.Client()),
		"the model is listed; task 2 is done, so its agent CLI is not needed")
	err = Preflight(ctx, f, t.TempDir(), llm.Config{Model: "no-such-model", BaseURL: srv.BaseURL()}, srv.Client())
	var pe *PreflightError
	require.True(t, errors.As(err, &pe), "%v", err)
	assert.Equal(t, []string{`the model server at ` + srv.BaseURL() + ` does not serve model "no-such-model" (it lists: ` + llmtest.Model +
		`): pass --model with one of them or set STATGRAPH_MODEL`}, pe.Problems)

	own, err := Parse("tasks.json", []byte(`{"tasks": [{"id": 1, "title": "t", "model": "own-model"}]}`), "")
	require.NoError(t, err)
	err = Preflight(ctx, own, t.TempDir(), llm.Config{BaseURL: srv.BaseURL()}, srv.Client())
	require.Error(t, err, "a task's own model is checked too")
	assert.Contains(t, err.Error(), `does not serve model "own-model"`)
	assert.Zero(t, srv.Count(), "the preflight makes no chat request")
}

// TestPreflightCommandInRepo: a command with a slash is looked up in the
// repository, and must be executable.
func TestPreflightCommandInRepo(t *testing.T) {
	repo := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(repo, "agent.sh"), []byte("#!/bin/sh\n"), 0o644))
	f, err := Parse("tasks.json", []byte(`{"tasks": [{"id": 1, "title": "t", "executor": {"command": ["./agent.sh"]}}]}`), "")
	require.NoError(t, err)
	err = Preflight(context.Background(), f, repo, llm.Config{}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "task 1: agent CLI ./agent.sh is not an executable file: chmod +x it")
	require.NoError(t, os.Chmod(filepath.Join(repo, "agent.sh"), 0o755))
	assert.NoError(t, Preflight(context.Background(), f, repo, llm.Config{}, nil))
}
