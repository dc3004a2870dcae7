package llmtest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

// post sends body to path on s with header key: value and returns the
// status, content type and body of the answer.
func post(t *testing.T, s *llmtest.Server, path, key, value, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL()+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set(key, value)
	resp, err := s.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// TestDialects: one script answers the Responses, Anthropic Messages and
// Gemini APIs. Each request reaches the fallback as the chat request it
// amounts to (the tool's result as a "tool" message, the tools offered),
// and the scripted tool call comes back in the API's own form, streamed
// when asked; an Error comes back as the API's error body.
func TestDialects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, path, key, value, body string
		want                         []string // in the answer, in order
		errWant                      string   // in the answer to the scripted 429
	}{
		{
			name: "responses", path: llmtest.ResponsesPath, key: "Authorization", value: "Bearer sk-r",
			body: `{"model":"m","stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]},` +
				`{"type":"function_call","call_id":"c0","name":"shell","arguments":"{}"},{"type":"function_call_output","call_id":"c0","output":"ran"}],` +
				`"tools":[{"type":"function","name":"shell"},{"type":"namespace","name":"ns","tools":[{"type":"function","name":"write"}]}]}`,
			want:    []string{"event: response.created", `"call_id":"call_1"`, `"name":"write"`, `"type":"function_call"`, "event: response.completed", `"input_tokens":30`, `"output_tokens":10`},
			errWant: `{"error":{"message":"slow down","type":"invalid_request_error","code":"rate_limit_exceeded"}}`,
		},
		{
			name: "messages", path: llmtest.MessagesPath, key: "x-api-key", value: "sk-a",
			body: `{"model":"m","stream":true,"system":[{"type":"text","text":"be brief"}],"messages":[{"role":"user","content":"go"},` +
				`{"role":"assistant","content":[{"type":"tool_use","id":"c0","name":"shell","input":{}}]},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"c0","content":[{"type":"text","text":"ran"}]}]}],` +
				`"tools":[{"name":"shell"},{"name":"write"}]}`,
			want:    []string{"event: message_start", `"name":"write","type":"tool_use"`, `"partial_json":"{\"path\":\"a.txt\"}"`, `"stop_reason":"tool_use"`, "event: message_stop"},
			errWant: `{"error":{"message":"slow down","type":"rate_limit_error"},"type":"error"}`,
		},
		{
			name: "gemini", path: llmtest.GeminiPrefix + "gemini-x:streamGenerateContent?alt=sse", key: "x-goog-api-key", value: "gk",
			body: `{"systemInstruction":{"parts":[{"text":"be brief"}]},"contents":[{"role":"user","parts":[{"text":"go"}]},` +
				`{"role":"model","parts":[{"functionCall":{"name":"shell","args":{}}}]},{"role":"user","parts":[{"functionResponse":{"name":"shell","response":{"output":"ran"}}}]}],` +
				`"tools":[{"functionDeclarations":[{"name":"shell"},{"name":"write"}]}]}`,
			want:    []string{"data: ", `"functionCall":{"args":{"path":"a.txt"},"name":"write"}`, `"candidatesTokenCount":10,"promptTokenCount":30`},
			errWant: `{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []openai.ChatCompletionRequest
			s := llmtest.NewServer(t)
			s.SetFallback(func(req openai.ChatCompletionRequest) llmtest.Reply {
				got = append(got, req)
				if len(got) > 1 {
					return llmtest.Error(http.StatusTooManyRequests, "slow down", "rate_limit_exceeded")
				}
				return llmtest.ToolCalls(40, llmtest.Call{Name: "write", Arguments: `{"path":"a.txt"}`})
			})
			status, ctype, body := post(t, s, tc.path, tc.key, tc.value, tc.body)
			assert.Equal(t, http.StatusOK, status)
			assert.Equal(t, "text/event-stream", ctype)
			rest := body
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				require.GreaterOrEqual(t, i, 0, "%q (in order) in:\n%s", w, body)
				rest = rest[i+len(w):]
			}
			require.Len(t, got, 1)
			var roles, tools []string
			for _, m := range got[0].Messages {
				roles = append(roles, m.Role)
			}
			for _, tool := range got[0].Tools {
				tools = append(tools, tool.Function.Name)
			}
			assert.Contains(t, roles, openai.ChatMessageRoleTool)
			assert.Contains(t, tools, "write")
			assert.Contains(t, tools, "shell")
			last := got[0].Messages[len(got[0].Messages)-1]
			assert.Contains(t, last.Content, "ran", "the tool's result is the last message")
			assert.Equal(t, s.Requests(), got, "Requests reads the bodies as the fallback did")

			status, _, body = post(t, s, tc.path, tc.key, tc.value, tc.body)
			assert.Equal(t, http.StatusTooManyRequests, status)
			assert.JSONEq(t, tc.errWant, body)
			want := tc.value
			if tc.key != "Authorization" {
				want = tc.key + ": " + tc.value
			}
			assert.Equal(t, []string{want, want}, s.AuthHeaders())
		})
	}
}
