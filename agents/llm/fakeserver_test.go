package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"
)

// testKey is the API key every test client sends; tests check it never leaks.
const testKey = "sk-canary-7f3c9a1e5b2d4f60"

// reply is one scripted answer of the fake server.
type reply struct {
	status int               // 0 = 200
	header map[string]string // response headers
	body   string            // raw response body
	delay  time.Duration     // wait before answering, or until the request is cancelled
}

// fakeServer is an OpenAI-compatible chat-completions server that answers
// from a queue of replies and records every request.
type fakeServer struct {
	srv *httptest.Server

	mu       sync.Mutex // guards the fields below
	replies  []reply
	fallback *reply // answers once replies is empty; nil = fail the test
	bodies   [][]byte
	auth     []string
	t        testing.TB
}

// newFakeServer starts a server answering with replies in order; it is
// closed when the test ends.
func newFakeServer(t testing.TB, replies ...reply) *fakeServer {
	t.Helper()
	f := &fakeServer{replies: replies, t: t}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	f.mu.Lock()
	if err != nil || r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		f.mu.Unlock()
		f.t.Errorf("fake server: unexpected request %s %s (read error %v)", r.Method, r.URL.Path, err)
		http.Error(w, "unexpected request", http.StatusTeapot)
		return
	}
	f.bodies = append(f.bodies, body)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	var rep reply
	switch {
	case len(f.replies) > 0:
		rep, f.replies = f.replies[0], f.replies[1:]
	case f.fallback != nil:
		rep = *f.fallback
	default:
		f.mu.Unlock()
		f.t.Errorf("fake server: no scripted reply left for request %d", len(f.bodies))
		http.Error(w, "no scripted reply", http.StatusTeapot)
		return
	}
	f.mu.Unlock()
	if rep.delay > 0 {
		select {
		case <-time.After(rep.delay):
		case <-r.Context().Done():
			return
		}
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	if rep.status != 0 {
		w.WriteHeader(rep.status)
	}
	_, _ = io.WriteString(w, rep.body)
}

// requests returns the decoded bodies of the requests received so far.
func (f *fakeServer) requests() []openai.ChatCompletionRequest {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]openai.ChatCompletionRequest, len(f.bodies))
	for i, b := range f.bodies {
		require.NoError(f.t, json.Unmarshal(b, &out[i]), "request %d: %s", i, b)
	}
	return out
}

// rawBodies returns the request bodies received so far.
func (f *fakeServer) rawBodies() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, len(f.bodies))
	for i, b := range f.bodies {
		out[i] = string(b)
	}
	return out
}

// authHeaders returns the Authorization headers received so far.
func (f *fakeServer) authHeaders() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.auth...)
}

// sleepRecorder is an injectable Config.Sleep that returns at once and
// records the waits asked for.
type sleepRecorder struct {
	mu    sync.Mutex // guards waits
	waits []time.Duration
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleepRecorder) recorded() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// newTestClient returns a client of f with testKey, model "test-model", 3
// retries and the recorder as Sleep; edit adjusts the config (may be nil).
func newTestClient(t testing.TB, f *fakeServer, edit func(*Config)) (*Client, *sleepRecorder) {
	t.Helper()
	s := &sleepRecorder{}
	cfg := Config{
		APIKey:     testKey,
		BaseURL:    f.srv.URL + "/v1",
		Model:      "test-model",
		MaxRetries: 3,
		HTTPClient: f.srv.Client(),
		Sleep:      s.sleep,
	}
	if edit != nil {
		edit(&cfg)
	}
	c, err := New(cfg)
	require.NoError(t, err)
	return c, s
}

// textReply answers with an assistant message of content using tokens total
// tokens (split 3:1 between prompt and completion).
func textReply(content string, tokens int) reply {
	return completion(openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: content}, tokens)
}

// toolReply answers with tool calls; each call is name and JSON arguments,
// with ids call_1, call_2, ...
func toolReply(tokens int, calls ...[2]string) reply {
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant}
	for i, c := range calls {
		msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{
			ID:       fmt.Sprintf("call_%d", i+1),
			Type:     openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: c[0], Arguments: c[1]},
		})
	}
	return completion(msg, tokens)
}

func completion(msg openai.ChatCompletionMessage, tokens int) reply {
	finish := openai.FinishReasonStop
	if len(msg.ToolCalls) > 0 {
		finish = openai.FinishReasonToolCalls
	}
	b, err := json.Marshal(openai.ChatCompletionResponse{
		ID:      "chatcmpl-test",
		Object:  "chat.completion",
		Model:   "test-model",
		Choices: []openai.ChatCompletionChoice{{Message: msg, FinishReason: finish}},
		Usage:   openai.Usage{PromptTokens: tokens * 3 / 4, CompletionTokens: tokens - tokens*3/4, TotalTokens: tokens},
	})
	if err != nil {
		panic(err)
	}
	return reply{body: string(b)}
}

// errorReply answers with status and an OpenAI-style error body.
func errorReply(status int, message, code string) reply {
	b, err := json.Marshal(map[string]any{"error": map[string]any{
		"message": message, "type": "invalid_request_error", "code": code,
	}})
	if err != nil {
		panic(err)
	}
	return reply{status: status, body: string(b)}
}

// userRequest is a one-message chat request.
func userRequest(text string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: text}}}
}
