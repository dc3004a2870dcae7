package dispatch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/tasks"
)

// TestPreflightModel: the preflight's one request to the model server (a
// server listing two models) and what it makes of the answer.
func TestPreflightModel(t *testing.T) {
	var chats atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != "/v1/models":
			chats.Add(1)
			http.NotFound(w, r)
		case r.Header.Get("Authorization") != "Bearer good-key":
			http.Error(w, `{"error": {"message": "bad key"}}`, http.StatusUnauthorized)
		default:
			fmt.Fprint(w, `{"object": "list", "data": [{"id": "qwen2.5-coder:latest"}, {"id": "llama3"}]}`)
		}
	}))
	defer srv.Close()
	base := srv.URL + "/v1"
	ctx := context.Background()
	parse := func(js string) *tasks.File {
		f, err := tasks.Parse("tasks.json", []byte(js), "")
		require.NoError(t, err)
		return f
	}
	plain := parse(`{"tasks": [{"id": 1, "title": "t"}, {"id": 2, "title": "done already", "status": "done", "executor": "codex"}]}`)
	for _, tc := range []struct {
		name string
		f    *tasks.File
		cfg  llm.Config
		want string // "" means no problem
	}{
		{"listed, with Ollama's tag", plain, llm.Config{Model: "qwen2.5-coder", BaseURL: base, APIKey: "good-key"}, ""},
		{"not listed", plain, llm.Config{Model: "gpt-4.1", BaseURL: base, APIKey: "good-key"},
			`the model server at ` + base + ` does not serve model "gpt-4.1" (it lists: llama3, qwen2.5-coder:latest): pass --model with one of them or set STATGRAPH_MODEL`},
		{"key rejected", plain, llm.Config{Model: "llama3", BaseURL: base, APIKey: "bad-key"},
			`the model server at ` + base + ` rejected the API key (HTTP 401): set OPENAI_API_KEY to a valid key for it`},
		{"a task's own model", parse(`{"tasks": [{"id": 1, "title": "t", "model": "own-model"}]}`), llm.Config{BaseURL: base, APIKey: "good-key"},
			`does not serve model "own-model"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Preflight(ctx, tc.f, t.TempDir(), tc.cfg, srv.Client())
			if tc.want == "" {
				assert.NoError(t, err, "the model is listed; task 2 is done, so its agent CLI is not needed")
				return
			}
			var pe *PreflightError
			require.True(t, errors.As(err, &pe), "%v", err)
			require.Len(t, pe.Problems, 1)
			assert.Contains(t, pe.Problems[0], tc.want)
		})
	}
	assert.Zero(t, chats.Load(), "the preflight makes no chat request")
}

// TestPreflightCommandInRepo: a command with a slash is looked up in the
// repository, and must be executable.
func TestPreflightCommandInRepo(t *testing.T) {
	repo := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(repo, "agent.sh"), []byte("#!/bin/sh\n"), 0o644))
	f, err := tasks.Parse("tasks.json", []byte(`{"tasks": [{"id": 1, "title": "t", "executor": {"command": ["./agent.sh"]}}]}`), "")
	require.NoError(t, err)
	err = Preflight(context.Background(), f, repo, llm.Config{}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "task 1: agent CLI ./agent.sh is not an executable file: chmod +x it")
	require.NoError(t, os.Chmod(filepath.Join(repo, "agent.sh"), 0o755))
	assert.NoError(t, Preflight(context.Background(), f, repo, llm.Config{}, nil))
}
