package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"

	openai "github.com/sashabaranov/go-openai"
)

// messagesDialect is the Anthropic Messages API, as Claude Code speaks it.
var messagesDialect = dialect{
	name:   "Messages API request",
	decode: decodeMessages,
	answer: answerMessages,
	failure: func(status int, e apiError) string {
		typ := map[int]string{
			http.StatusBadRequest: "invalid_request_error", http.StatusUnauthorized: "authentication_error",
			http.StatusForbidden: "permission_error", http.StatusNotFound: "not_found_error",
			http.StatusTooManyRequests: "rate_limit_error", 529: "overloaded_error",
		}[status]
		if typ == "" {
			typ = "api_error"
		}
		return mustJSON(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": e.Message}})
	},
}

// messagesBlock is a content block of a Messages request: text, a tool_use
// of the model's, or a tool_result; other kinds are ignored.
type messagesBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// messagesBlocks reads content that is a string or a list of blocks.
func messagesBlocks(raw json.RawMessage) ([]messagesBlock, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []messagesBlock{{Type: "text", Text: s}}, nil
	}
	var blocks []messagesBlock
	err := json.Unmarshal(raw, &blocks)
	return blocks, err
}

func decodeMessages(_ string, body []byte) (openai.ChatCompletionRequest, error) {
	var r struct {
		Model    string          `json:"model"`
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Stream bool `json:"stream"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return openai.ChatCompletionRequest{}, err
	}
	req := openai.ChatCompletionRequest{Model: r.Model, Stream: r.Stream}
	if len(r.System) > 0 {
		req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: toolResultText(r.System)})
	}
	for i, m := range r.Messages {
		blocks, err := messagesBlocks(m.Content)
		if err != nil {
			return req, fmt.Errorf("message %d: %w", i+1, err)
		}
		msg := openai.ChatCompletionMessage{Role: m.Role}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				if msg.Content != "" {
					msg.Content += "\n"
				}
				msg.Content += b.Text
			case "tool_use":
				msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{ID: b.ID, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: b.Name, Arguments: string(b.Input)}})
			case "tool_result":
				req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: b.ToolUseID, Content: toolResultText(b.Content)})
			}
		}
		if msg.Content != "" || len(msg.ToolCalls) > 0 {
			req.Messages = append(req.Messages, msg)
		}
	}
	for _, t := range r.Tools {
		req.Tools = append(req.Tools, functionTool(t.Name))
	}
	return req, nil
}

// answerMessages writes c as a Messages API message: a text block for its
// text, a tool_use block per tool call (stop reason "tool_use"), and its
// usage; as message_start, content_block_start/delta/stop per block,
// message_delta and message_stop events when streamed.
func answerMessages(c openai.ChatCompletionResponse, _ string, stream bool) (string, string) {
	msg := c.Choices[0].Message
	var blocks []map[string]any
	if msg.Content != "" {
		blocks = append(blocks, map[string]any{"type": "text", "text": msg.Content})
	}
	for _, tc := range msg.ToolCalls {
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": tc.ID, "name": tc.Function.Name, "input": json.RawMessage(tc.Function.Arguments)})
	}
	stop := "end_turn"
	if len(msg.ToolCalls) > 0 {
		stop = "tool_use"
	}
	usage := map[string]int{"input_tokens": c.Usage.PromptTokens, "output_tokens": c.Usage.CompletionTokens}
	message := map[string]any{
		"id": "msg_llmtest", "type": "message", "role": "assistant", "model": c.Model,
		"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
	}
	if !stream {
		return "application/json", mustJSON(message)
	}
	start := map[string]any{
		"id": "msg_llmtest", "type": "message", "role": "assistant", "model": c.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]int{"input_tokens": c.Usage.PromptTokens, "output_tokens": 0},
	}
	body := sse("message_start", map[string]any{"type": "message_start", "message": start})
	for i, b := range blocks {
		open, delta := map[string]any{"type": "text", "text": ""}, map[string]any{"type": "text_delta", "text": b["text"]}
		if b["type"] == "tool_use" {
			open = map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}
			delta = map[string]any{"type": "input_json_delta", "partial_json": string(b["input"].(json.RawMessage))}
		}
		body += sse("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": open})
		body += sse("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": delta})
		body += sse("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	body += sse("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": usage})
	body += sse("message_stop", map[string]any{"type": "message_stop"})
	return "text/event-stream", body
}
