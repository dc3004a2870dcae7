package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
)

// answer is one scripted response of the model server.
type answer struct {
	status int               // 0 means 200
	header map[string]string // extra response headers
	body   string            // the raw JSON body
}

// modelServer is a scripted OpenAI-compatible chat-completions server. It
// answers from a queue, then from next (if set), and records every request
// body, so tests see exactly what the real go-openai client sent.
type modelServer struct {
	srv *httptest.Server
	t   testing.TB

	mu     sync.Mutex // guards queue, next, bodies and auth
	queue  []answer
	next   func(req openai.ChatCompletionRequest) answer
	bodies [][]byte
	auth   []string // the Authorization header of each request
}

// newModelServer starts a server that answers with queue in order; it is
// closed when the test ends.
func newModelServer(t testing.TB, queue ...answer) *modelServer {
	t.Helper()
	m := &modelServer{t: t, queue: queue}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *modelServer) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil || r.URL.Path != "/v1/chat/completions" {
		m.t.Errorf("model server: unexpected request %s %s (%v)", r.Method, r.URL.Path, err)
		http.Error(w, "unexpected request", http.StatusTeapot)
		return
	}
	m.mu.Lock()
	m.bodies = append(m.bodies, body)
	m.auth = append(m.auth, r.Header.Get("Authorization"))
	var a answer
	switch {
	case len(m.queue) > 0:
		a, m.queue = m.queue[0], m.queue[1:]
	case m.next != nil:
		var req openai.ChatCompletionRequest
		if err := json.Unmarshal(body, &req); err != nil {
			m.mu.Unlock()
			m.t.Errorf("model server: request is not JSON: %v", err)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		a = m.next(req)
	default:
		n := len(m.bodies)
		m.mu.Unlock()
		m.t.Errorf("model server: no answer scripted for request %d", n)
		http.Error(w, "no answer scripted", http.StatusTeapot)
		return
	}
	m.mu.Unlock()
	for k, v := range a.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	if a.status != 0 {
		w.WriteHeader(a.status)
	}
	_, _ = io.WriteString(w, a.body)
}

// requests decodes the requests received so far.
func (m *modelServer) requests() []openai.ChatCompletionRequest {
	m.t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]openai.ChatCompletionRequest, len(m.bodies))
	for i, b := range m.bodies {
		require.NoError(m.t, json.Unmarshal(b, &out[i]), "request %d", i)
	}
	return out
}

// raw returns the request bodies received so far, concatenated.
func (m *modelServer) raw() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	for _, body := range m.bodies {
		b.Write(body)
		b.WriteByte('\n')
	}
	return b.String()
}

// authHeaders returns the Authorization headers received so far.
func (m *modelServer) authHeaders() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.auth...)
}

// count returns how many requests arrived.
func (m *modelServer) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.bodies)
}

// attemptPrompts returns the user prompt of the first turn of every executor
// attempt, in order: requests that offer tools and carry only the system
// and user messages.
func attemptPrompts(reqs []openai.ChatCompletionRequest) []string {
	var out []string
	for _, r := range reqs {
		if len(r.Tools) > 0 && len(r.Messages) == 2 {
			out = append(out, r.Messages[1].Content)
		}
	}
	return out
}

// sleeps is an injectable llm.Config.Sleep that returns at once and records
// the waits the client asked for.
type sleeps struct {
	mu    sync.Mutex // guards waits
	waits []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) recorded() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// client returns an llm client of m with model "test-model", two retries
// and s as its Sleep; edit may adjust the config.
func (m *modelServer) client(t testing.TB, s *sleeps, edit func(*llm.Config)) *llm.Client {
	t.Helper()
	cfg := llm.Config{
		APIKey:     "sk-test-not-a-secret",
		BaseURL:    m.srv.URL + "/v1",
		Model:      "test-model",
		MaxRetries: 2,
		HTTPClient: m.srv.Client(),
		Sleep:      s.sleep,
	}
	if edit != nil {
		edit(&cfg)
	}
	c, err := llm.New(cfg)
	require.NoError(t, err)
	return c
}

// message answers with one assistant message costing tokens.
func message(msg openai.ChatCompletionMessage, tokens int) answer {
	finish := openai.FinishReasonStop
	if len(msg.ToolCalls) > 0 {
		finish = openai.FinishReasonToolCalls
	}
	b, err := json.Marshal(openai.ChatCompletionResponse{
		ID: "chatcmpl-agents", Object: "chat.completion", Model: "test-model",
		Choices: []openai.ChatCompletionChoice{{Message: msg, FinishReason: finish}},
		Usage:   openai.Usage{PromptTokens: tokens - tokens/4, CompletionTokens: tokens / 4, TotalTokens: tokens},
	})
	if err != nil {
		panic(err)
	}
	return answer{body: string(b)}
}

// text answers with content and costs 100 tokens.
func text(content string) answer {
	return message(openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: content}, 100)
}

// planAnswer answers the planner with a valid plan.
func planAnswer() answer {
	return text(`{"summary":"make Add add","steps":["change a - b to a + b in add.go"],"files":["add.go"],"test_strategy":"go test ./..."}`)
}

// call is one tool call of a scripted answer.
type call struct{ name, args string }

// tools answers with tool calls (ids call_1, call_2, ...) costing 100 tokens.
func tools(calls ...call) answer {
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant}
	for i, c := range calls {
		msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{
			ID: fmt.Sprintf("call_%d", i+1), Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: c.name, Arguments: c.args},
		})
	}
	return message(msg, 100)
}

// writeFile is a write_file tool call.
func writeFile(path, content string) call {
	args, err := json.Marshal(map[string]string{"path": path, "content": content})
	if err != nil {
		panic(err)
	}
	return call{"write_file", string(args)}
}

// finish is a finish tool call.
func finish(summary string) call {
	args, err := json.Marshal(map[string]string{"summary": summary})
	if err != nil {
		panic(err)
	}
	return call{"finish", string(args)}
}

// apiError answers with an OpenAI-style error body.
func apiError(status int, msg string, header map[string]string) answer {
	b, err := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "test_error"}})
	if err != nil {
		panic(err)
	}
	return answer{status: status, header: header, body: string(b)}
}
