package llmtest

import (
	"encoding/json"
	"fmt"

	openai "github.com/sashabaranov/go-openai"
)

// responsesDialect is the OpenAI Responses API, as codex speaks it.
var responsesDialect = dialect{
	name:   "Responses API request",
	decode: decodeResponses,
	answer: answerResponses,
	failure: func(_ int, e apiError) string {
		return mustJSON(map[string]any{"error": e})
	},
}

// responsesItem is an input item of a Responses request: a message, a
// function call the model made, or its output; other kinds are ignored.
type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	CallID    string          `json:"call_id"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
	Tools     []responsesTool `json:"tools"` // of an additional_tools item
}

// responsesTool is a tool of a Responses request; a namespace holds more.
type responsesTool struct {
	Type  string          `json:"type"`
	Name  string          `json:"name"`
	Tools []responsesTool `json:"tools"`
}

func decodeResponses(_ string, body []byte) (openai.ChatCompletionRequest, error) {
	var r struct {
		Model        string          `json:"model"`
		Instructions string          `json:"instructions"`
		Input        json.RawMessage `json:"input"`
		Tools        []responsesTool `json:"tools"`
		Stream       bool            `json:"stream"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return openai.ChatCompletionRequest{}, err
	}
	req := openai.ChatCompletionRequest{Model: r.Model, Stream: r.Stream}
	if r.Instructions != "" {
		req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: r.Instructions})
	}
	var items []responsesItem
	var text string
	if json.Unmarshal(r.Input, &text) == nil {
		items = []responsesItem{{Type: "message", Role: openai.ChatMessageRoleUser, Content: r.Input}}
	} else if err := json.Unmarshal(r.Input, &items); err != nil {
		return req, fmt.Errorf("input: %w", err)
	}
	tools := r.Tools
	for _, it := range items {
		switch it.Type {
		case "message", "":
			req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: it.Role, Content: toolResultText(it.Content)})
		case "function_call":
			req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{{
				ID: it.CallID, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: it.Name, Arguments: it.Arguments},
			}}})
		case "function_call_output":
			req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: it.CallID, Content: toolResultText(it.Output)})
		case "additional_tools":
			tools = append(tools, it.Tools...)
		}
	}
	var add func([]responsesTool)
	add = func(ts []responsesTool) {
		for _, t := range ts {
			if t.Name != "" && t.Type != "namespace" {
				req.Tools = append(req.Tools, functionTool(t.Name))
			}
			add(t.Tools)
		}
	}
	add(tools)
	return req, nil
}

// answerResponses writes c as a Responses API response: a message item
// for its text, a function_call item per tool call, and its usage; as
// response.created, response.output_item.added/done per item and
// response.completed events when streamed.
func answerResponses(c openai.ChatCompletionResponse, _ string, stream bool) (string, string) {
	msg := c.Choices[0].Message
	var output []map[string]any
	if msg.Content != "" {
		output = append(output, map[string]any{
			"type": "message", "id": "msg_llmtest", "role": "assistant", "status": "completed",
			"content": []map[string]any{{"type": "output_text", "text": msg.Content, "annotations": []any{}}},
		})
	}
	for i, tc := range msg.ToolCalls {
		output = append(output, map[string]any{
			"type": "function_call", "id": fmt.Sprintf("fc_%d", i+1), "call_id": tc.ID, "status": "completed",
			"name": tc.Function.Name, "arguments": tc.Function.Arguments,
		})
	}
	resp := map[string]any{
		"id": "resp_llmtest", "object": "response", "status": "completed", "model": c.Model, "output": output,
		"usage": map[string]any{
			"input_tokens": c.Usage.PromptTokens, "input_tokens_details": map[string]int{"cached_tokens": 0},
			"output_tokens": c.Usage.CompletionTokens, "output_tokens_details": map[string]int{"reasoning_tokens": 0},
			"total_tokens": c.Usage.TotalTokens,
		},
	}
	if !stream {
		return "application/json", mustJSON(resp)
	}
	started := map[string]any{"id": "resp_llmtest", "object": "response", "status": "in_progress", "model": c.Model, "output": []any{}}
	body := sse("response.created", map[string]any{"type": "response.created", "response": started})
	for i, item := range output {
		body += sse("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": i, "item": item})
		if item["type"] == "message" {
			body += sse("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": item["id"], "output_index": i, "content_index": 0, "delta": msg.Content})
		}
		body += sse("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": i, "item": item})
	}
	body += sse("response.completed", map[string]any{"type": "response.completed", "response": resp})
	return "text/event-stream", body
}
