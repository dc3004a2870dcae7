package llmtest

import (
	"encoding/json"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Paths of the provider APIs a [Server] speaks besides the OpenAI chat API
// at [Path]. Every one of them is answered from the same script: the
// request is read as the chat request it amounts to (messages, tool
// results, tools offered), a [Reply] is picked for it as for a chat
// request, and a successful reply's completion (or an [Error]'s status and
// message) is written in the API's own form, streamed when the request
// asks for it.
const (
	// ResponsesPath is the OpenAI Responses API (codex): output items,
	// function_call items for tool calls, and response.* server-sent
	// events when "stream" is true.
	ResponsesPath = "/v1/responses"
	// MessagesPath is the Anthropic Messages API (Claude Code): content
	// blocks, tool_use blocks for tool calls, and message_start ...
	// message_stop events when "stream" is true. Point ANTHROPIC_BASE_URL
	// at [Server.URL].
	MessagesPath = "/v1/messages"
	// GeminiPrefix starts the Gemini API's paths (gemini-cli):
	// /v1beta/models/<model>:generateContent, and :streamGenerateContent,
	// streamed as server-sent events with ?alt=sse. Point
	// GOOGLE_GEMINI_BASE_URL at [Server.URL].
	GeminiPrefix = "/v1beta/models/"
)

// dialect is one provider API: how its request reads as a chat request,
// and how a chat reply is written as its answer.
type dialect struct {
	name string
	// decode reads a request body (path is the request's, for APIs that
	// name the model there).
	decode func(path string, body []byte) (openai.ChatCompletionRequest, error)
	// answer writes a successful completion c, scripted as raw, streamed
	// or not.
	answer func(c openai.ChatCompletionResponse, raw string, stream bool) (contentType, body string)
	// failure writes an error of status with message and the OpenAI error
	// type and code.
	failure func(status int, e apiError) string
}

// apiError is the error object of an OpenAI-style error body.
type apiError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    string `json:"code,omitempty"`
}

// dialectOf returns the dialect of a POST to path, or nil for a path no
// dialect answers.
func dialectOf(path string) *dialect {
	switch {
	case path == Path:
		return &chatDialect
	case path == ResponsesPath:
		return &responsesDialect
	case path == MessagesPath:
		return &messagesDialect
	case strings.HasPrefix(path, GeminiPrefix) && (strings.HasSuffix(path, ":generateContent") || strings.HasSuffix(path, ":streamGenerateContent")):
		return &geminiDialect
	}
	return nil
}

// chatDialect is the OpenAI chat API, whose replies are written as they
// are scripted.
var chatDialect = dialect{
	name: "chat completion request",
	decode: func(_ string, body []byte) (openai.ChatCompletionRequest, error) {
		var req openai.ChatCompletionRequest
		err := json.Unmarshal(body, &req)
		return req, err
	},
	answer: func(_ openai.ChatCompletionResponse, raw string, stream bool) (string, string) {
		if sse, ok := streamBody(raw); ok && stream {
			return "text/event-stream", sse
		}
		return "application/json", raw
	},
}

// wantsStreamOf reports whether a request of d to path with body asks for
// a streamed answer.
func (d *dialect) wantsStreamOf(path string, body []byte) bool {
	if d == &geminiDialect {
		return strings.HasSuffix(path, ":streamGenerateContent")
	}
	return wantsStream(body)
}

// write sends rep as d's answer to a request that asked for a stream or
// not: a successful chat completion in d's form, an OpenAI-style error in
// d's form with rep's status, anything else as it is.
func (d *dialect) write(w http.ResponseWriter, rep Reply, stream bool) {
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	contentType, body := "application/json", rep.Body
	var c openai.ChatCompletionResponse
	var e struct {
		Error *apiError `json:"error"`
	}
	switch {
	case status == http.StatusOK && json.Unmarshal([]byte(rep.Body), &c) == nil && len(c.Choices) > 0:
		contentType, body = d.answer(c, rep.Body, stream)
	case status >= 400 && d.failure != nil && json.Unmarshal([]byte(rep.Body), &e) == nil && e.Error != nil:
		body = d.failure(status, *e.Error)
	}
	w.Header().Set("Content-Type", contentType)
	if rep.Status != 0 {
		w.WriteHeader(rep.Status)
	}
	_, _ = w.Write([]byte(body))
}

// sse is one server-sent event: "event: name" (when name is not empty)
// and "data: " the JSON of v.
func sse(name string, v any) string {
	var b strings.Builder
	if name != "" {
		b.WriteString("event: " + name + "\n")
	}
	b.WriteString("data: " + mustJSON(v) + "\n\n")
	return b.String()
}

// toolResultText is the text of a tool result that arrives as a string or
// as a list of content parts with text.
func toolResultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var texts []string
		for _, p := range parts {
			texts = append(texts, p.Text)
		}
		return strings.Join(texts, "\n")
	}
	return string(raw)
}

// functionTool is a chat request's entry for a tool named name.
func functionTool(name string) openai.Tool {
	return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: name}}
}

// tokenCount returns the answer to a token-counting request to path
// (Anthropic's /v1/messages/count_tokens, Gemini's :countTokens), which is
// not a model request: it is neither recorded nor given a reply of the
// script. ok is false for other paths.
func tokenCount(path string) (body string, ok bool) {
	switch {
	case path == MessagesPath+"/count_tokens":
		return `{"input_tokens": 1}`, true
	case strings.HasPrefix(path, GeminiPrefix) && strings.HasSuffix(path, ":countTokens"):
		return `{"totalTokens": 1}`, true
	}
	return "", false
}
