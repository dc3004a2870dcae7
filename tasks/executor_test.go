package tasks

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
