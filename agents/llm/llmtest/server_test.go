package llmtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

// client returns a go-openai client of s that sends key and never retries.
func client(s *llmtest.Server, key string) *openai.Client {
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = s.BaseURL()
	cfg.HTTPClient = s.Client()
	return openai.NewClientWithConfig(cfg)
}

// ask sends a one-message request with content.
func ask(ctx context.Context, c *openai.Client, content string) (openai.ChatCompletionResponse, error) {
	return c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model:    "m",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: content}},
	})
}

// failures is a testing.TB that keeps Errorf and Fatalf messages instead of
// failing the real test, so tests can check that the server fails a test.
type failures struct {
	testing.TB
	mu   sync.Mutex // guards msgs
	msgs []string
}

func (f *failures) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
}

func (f *failures) Fatalf(format string, args ...any) { f.Errorf(format, args...) }

func (f *failures) got() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.msgs...)
}

func TestServerAnswersInOrderAndRecords(t *testing.T) {
	s := llmtest.NewServer(t,
		llmtest.Text("hello", 40),
		llmtest.ToolCalls(10, llmtest.WriteFile("a.go", "package a\n"), llmtest.Finish("done")),
	)
	c := client(s, "sk-one")
	resp, err := ask(t.Context(), c, "first")
	require.NoError(t, err)
	assert.Equal(t, "hello", resp.Choices[0].Message.Content)
	assert.Equal(t, openai.FinishReasonStop, resp.Choices[0].FinishReason)
	assert.Equal(t, openai.Usage{PromptTokens: 30, CompletionTokens: 10, TotalTokens: 40}, resp.Usage)
	assert.Equal(t, llmtest.Model, resp.Model)

	resp, err = ask(t.Context(), client(s, "sk-two"), "second")
	require.NoError(t, err)
	assert.Equal(t, openai.FinishReasonToolCalls, resp.Choices[0].FinishReason)
	assert.Equal(t, openai.Usage{PromptTokens: 7, CompletionTokens: 3, TotalTokens: 10}, resp.Usage, "3/4 rounded down is prompt")
	calls := resp.Choices[0].Message.ToolCalls
	require.Len(t, calls, 2)
	assert.Equal(t, []string{"call_1", "call_2"}, []string{calls[0].ID, calls[1].ID})
	assert.Equal(t, "write_file", calls[0].Function.Name)
	var wf map[string]string
	require.NoError(t, json.Unmarshal([]byte(calls[0].Function.Arguments), &wf))
	assert.Equal(t, map[string]string{"path": "a.go", "content": "package a\n"}, wf)
	assert.Equal(t, "finish", calls[1].Function.Name)
	assert.JSONEq(t, `{"summary":"done"}`, calls[1].Function.Arguments)

	assert.Equal(t, 2, s.Count())
	assert.Equal(t, []string{"Bearer sk-one", "Bearer sk-two"}, s.AuthHeaders())
	reqs := s.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "first", reqs[0].Messages[0].Content)
	assert.Equal(t, "second", reqs[1].Messages[0].Content)
	raw := s.RawBodies()
	require.Len(t, raw, 2)
	assert.Contains(t, raw[1], `"content":"second"`)
	assert.True(t, strings.HasPrefix(s.BaseURL(), s.URL()) && strings.HasSuffix(s.BaseURL(), "/v1"), "base URL %s", s.BaseURL())
}

func TestErrorReplies(t *testing.T) {
	for _, tc := range []struct {
		name     string
		reply    llmtest.Reply
		status   int
		code     any
		kind     string
		header   string
		original bool // the reply WithHeader was called on keeps no header
	}{
		{"rate limited with Retry-After", llmtest.Error(429, "slow down", "rate_limit_exceeded").WithHeader("Retry-After", "3"),
			429, "rate_limit_exceeded", "invalid_request_error", "3", true},
		{"server error without code", llmtest.Error(500, "boom", ""), 500, nil, "server_error", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := llmtest.NewServer(t, tc.reply)
			_, err := ask(t.Context(), client(s, ""), "hi")
			var apiErr *openai.APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tc.status, apiErr.HTTPStatusCode)
			assert.Equal(t, tc.code, apiErr.Code)
			assert.Equal(t, tc.kind, apiErr.Type)

			s.Reset(tc.reply)
			resp, err := s.Client().Post(s.URL()+llmtest.Path, "application/json", strings.NewReader("{}"))
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			assert.Equal(t, tc.status, resp.StatusCode)
			assert.Equal(t, tc.header, resp.Header.Get("Retry-After"))
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		})
	}
	base := llmtest.Error(429, "x", "")
	_ = base.WithHeader("Retry-After", "1")
	assert.Nil(t, base.Header, "WithHeader leaves its receiver alone")
	one := base.WithHeader("a", "1")
	two := one.WithHeader("b", "2")
	assert.Equal(t, map[string]string{"a": "1"}, one.Header)
	assert.Equal(t, map[string]string{"a": "1", "b": "2"}, two.Header)
}

func TestFallbackAndReset(t *testing.T) {
	s := llmtest.NewServer(t, llmtest.Text("queued", 4))
	s.SetFallback(func(req openai.ChatCompletionRequest) llmtest.Reply {
		return llmtest.Text("echo "+req.Messages[0].Content, 4)
	})
	c := client(s, "")
	for _, want := range []string{"queued", "echo a", "echo b"} {
		resp, err := ask(t.Context(), c, strings.TrimPrefix(want, "echo "))
		require.NoError(t, err)
		assert.Equal(t, want, resp.Choices[0].Message.Content)
	}
	assert.Equal(t, 3, s.Count())

	s.Reset(llmtest.Text("fresh", 4))
	assert.Zero(t, s.Count(), "Reset forgets the requests")
	assert.Empty(t, s.AuthHeaders())
	resp, err := ask(t.Context(), c, "c")
	require.NoError(t, err)
	assert.Equal(t, "fresh", resp.Choices[0].Message.Content, "the new queue comes first")

	s.SetFallback(llmtest.Always(llmtest.Error(503, "busy", "")))
	for range 2 {
		_, err = ask(t.Context(), c, "d")
		var apiErr *openai.APIError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, 503, apiErr.HTTPStatusCode)
	}
	assert.Equal(t, 3, s.Count())
}

func TestDelayEndsWithTheClient(t *testing.T) {
	slow := llmtest.Text("late", 1)
	slow.Delay = time.Minute
	s := llmtest.NewServer(t, slow)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := ask(ctx, client(s, ""), "hi")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	s.Close()
	assert.Less(t, time.Since(start), 10*time.Second, "the handler stopped waiting when the client gave up")
	assert.Equal(t, 1, s.Count())
}

func TestServerFailsTheTest(t *testing.T) {
	t.Run("no reply left", func(t *testing.T) {
		f := &failures{TB: t}
		s := llmtest.NewServer(f)
		_, err := ask(t.Context(), client(s, ""), "hi")
		require.Error(t, err)
		require.Len(t, f.got(), 1)
		assert.Contains(t, f.got()[0], "no reply left for request 1")
		assert.Equal(t, 1, s.Count())
	})
	t.Run("wrong endpoint", func(t *testing.T) {
		f := &failures{TB: t}
		s := llmtest.NewServer(f, llmtest.Text("unused", 1))
		resp, err := s.Client().Get(s.URL() + "/v1/embeddings")
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, http.StatusTeapot, resp.StatusCode)
		require.Len(t, f.got(), 1)
		assert.Contains(t, f.got()[0], "unexpected request GET /v1/embeddings")
		assert.Zero(t, s.Count())
	})
	t.Run("fallback given a body that is not JSON", func(t *testing.T) {
		f := &failures{TB: t}
		s := llmtest.NewServer(f)
		s.SetFallback(llmtest.Always(llmtest.Text("unused", 1)))
		resp, err := s.Client().Post(s.URL()+llmtest.Path, "application/json", strings.NewReader("{"))
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		require.Len(t, f.got(), 1)
		assert.Contains(t, f.got()[0], "request 1 is not a chat completion request")
		s.Requests()
		require.Len(t, f.got(), 2, "Requests fails the test on a body that does not decode")
		assert.Contains(t, f.got()[1], "request 1 is not a chat completion request")
	})
}
