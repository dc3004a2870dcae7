package llmtest

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Model is the model name every completion built here reports.
const Model = "test-model"

// Reply is one scripted answer of a [Server]. The zero Reply is a 200
// response with an empty body, which go-openai reports as an error.
type Reply struct {
	// Status is the HTTP status; 0 means 200.
	Status int
	// Header holds extra response headers (Retry-After, retry-after-ms,
	// ...); nil means none. Content-Type is always application/json.
	Header map[string]string
	// Body is the raw response body, sent as it is.
	Body string
	// Delay makes the server wait this long before answering; if the
	// client gives up first, the server answers nothing. 0 means no wait.
	Delay time.Duration
}

// WithHeader returns a copy of r that also sends the header key: value. It
// does not modify r.
func (r Reply) WithHeader(key, value string) Reply {
	h := maps.Clone(r.Header)
	if h == nil {
		h = map[string]string{}
	}
	h[key] = value
	r.Header = h
	return r
}

// ReplyFunc answers a request once a server's queue of replies is empty.
type ReplyFunc func(req openai.ChatCompletionRequest) Reply

// Always returns a ReplyFunc that answers every request with r.
func Always(r Reply) ReplyFunc {
	return func(openai.ChatCompletionRequest) Reply { return r }
}

// Completion answers with the assistant message msg and a usage of tokens
// total tokens, three quarters of them (rounded down) counted as prompt and
// the rest as completion. The finish reason is "tool_calls" when msg has
// tool calls and "stop" otherwise.
func Completion(msg openai.ChatCompletionMessage, tokens int) Reply {
	finish := openai.FinishReasonStop
	if len(msg.ToolCalls) > 0 {
		finish = openai.FinishReasonToolCalls
	}
	prompt := tokens * 3 / 4
	return Reply{Body: mustJSON(openai.ChatCompletionResponse{
		ID:      "chatcmpl-llmtest",
		Object:  "chat.completion",
		Model:   Model,
		Choices: []openai.ChatCompletionChoice{{Message: msg, FinishReason: finish}},
		Usage:   openai.Usage{PromptTokens: prompt, CompletionTokens: tokens - prompt, TotalTokens: tokens},
	})}
}

// Text answers with an assistant message of content, using tokens tokens
// (split as [Completion] says).
func Text(content string, tokens int) Reply {
	return Completion(openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: content}, tokens)
}

// Call is one tool call of a scripted answer: the function's name and its
// arguments as raw JSON, sent as they are (so they may be malformed on
// purpose).
type Call struct {
	Name      string
	Arguments string
}

// WriteFile is a call of the write_file tool with path and content.
func WriteFile(path, content string) Call {
	return Call{Name: "write_file", Arguments: mustJSON(map[string]string{"path": path, "content": content})}
}

// Finish is a call of the finish tool with summary.
func Finish(summary string) Call {
	return Call{Name: "finish", Arguments: mustJSON(map[string]string{"summary": summary})}
}

// ToolCalls answers with an assistant message calling calls in order, with
// ids call_1, call_2, ..., using tokens tokens (split as [Completion] says).
func ToolCalls(tokens int, calls ...Call) Reply {
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant}
	for i, c := range calls {
		msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{
			ID:       fmt.Sprintf("call_%d", i+1),
			Type:     openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: c.Name, Arguments: c.Arguments},
		})
	}
	return Completion(msg, tokens)
}

// Error answers with HTTP status and an OpenAI-style error body
// {"error": {"message", "type", "code"}}. The type is "server_error" for a
// 5xx status and "invalid_request_error" otherwise; an empty code is left
// out. Add headers such as Retry-After with [Reply.WithHeader].
func Error(status int, message, code string) Reply {
	e := map[string]string{"message": message, "type": "invalid_request_error"}
	if status >= http.StatusInternalServerError {
		e["type"] = "server_error"
	}
	if code != "" {
		e["code"] = code
	}
	return Reply{Status: status, Body: mustJSON(map[string]any{"error": e})}
}

// mustJSON marshals v, which is built here from strings and numbers only,
// so marshalling cannot fail.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("llmtest: marshal %T: %v", v, err))
	}
	return string(b)
}
