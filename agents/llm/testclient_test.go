package llm

import (
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

// testKey is the API key every test client sends; tests check it never leaks.
const testKey = "sk-canary-7f3c9a1e5b2d4f60"

// newTestClient returns a client of s with testKey, model "test-model", 3
// retries and a SleepRecorder as Sleep; edit adjusts the config (may be nil).
func newTestClient(t testing.TB, s *llmtest.Server, edit func(*Config)) (*Client, *llmtest.SleepRecorder) {
	t.Helper()
	sleeps := &llmtest.SleepRecorder{}
	cfg := Config{
		APIKey:     testKey,
		BaseURL:    s.BaseURL(),
		Model:      llmtest.Model,
		MaxRetries: 3,
		HTTPClient: s.Client(),
		Sleep:      sleeps.Sleep,
	}
	if edit != nil {
		edit(&cfg)
	}
	c, err := New(cfg)
	require.NoError(t, err)
	return c, sleeps
}

// userRequest is a one-message chat request.
func userRequest(text string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: text}}}
}
