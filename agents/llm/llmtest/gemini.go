package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// geminiDialect is the Gemini API, as gemini-cli speaks it.
var geminiDialect = dialect{
	name:   "Gemini API request",
	decode: decodeGemini,
	answer: answerGemini,
	failure: func(status int, e apiError) string {
		s := map[int]string{
			http.StatusBadRequest: "INVALID_ARGUMENT", http.StatusUnauthorized: "UNAUTHENTICATED",
			http.StatusForbidden: "PERMISSION_DENIED", http.StatusNotFound: "NOT_FOUND",
			http.StatusTooManyRequests: "RESOURCE_EXHAUSTED", http.StatusServiceUnavailable: "UNAVAILABLE",
		}[status]
		if s == "" {
			s = "INTERNAL"
		}
		return mustJSON(map[string]any{"error": map[string]any{"code": status, "message": e.Message, "status": s}})
	},
}

// geminiPart is a part of a Gemini content: text, a function call of the
// model's, or a function's response; other kinds are ignored.
type geminiPart struct {
	Text         string `json:"text,omitempty"`
	FunctionCall *struct {
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall,omitempty"`
	FunctionResponse *struct {
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse,omitempty"`
}

type geminiContent struct {
	Role  string       `json:"role"`
	Parts []geminiPart `json:"parts"`
}

func decodeGemini(path string, body []byte) (openai.ChatCompletionRequest, error) {
	var r struct {
		Contents          []geminiContent `json:"contents"`
		SystemInstruction *geminiContent  `json:"systemInstruction"`
		Tools             []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return openai.ChatCompletionRequest{}, err
	}
	model, _, _ := strings.Cut(strings.TrimPrefix(path, GeminiPrefix), ":")
	req := openai.ChatCompletionRequest{Model: model, Stream: strings.HasSuffix(path, ":streamGenerateContent")}
	text := func(parts []geminiPart) string {
		var texts []string
		for _, p := range parts {
			if p.Text != "" {
				texts = append(texts, p.Text)
			}
		}
		return strings.Join(texts, "\n")
	}
	if r.SystemInstruction != nil {
		req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: text(r.SystemInstruction.Parts)})
	}
	for _, c := range r.Contents {
		msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: text(c.Parts)}
		if c.Role == "model" {
			msg.Role = openai.ChatMessageRoleAssistant
		}
		for i, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{ID: fmt.Sprintf("call_%d", i+1), Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: p.FunctionCall.Name, Arguments: string(p.FunctionCall.Args)}})
			case p.FunctionResponse != nil:
				req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, Name: p.FunctionResponse.Name, Content: string(p.FunctionResponse.Response)})
			}
		}
		if msg.Content != "" || len(msg.ToolCalls) > 0 {
			req.Messages = append(req.Messages, msg)
		}
	}
	for _, t := range r.Tools {
		for _, f := range t.FunctionDeclarations {
			req.Tools = append(req.Tools, functionTool(f.Name))
		}
	}
	return req, nil
}

// answerGemini writes c as a GenerateContentResponse: a text part for its
// text, a functionCall part per tool call, and its usage metadata; one
// "data:" event holding it all when streamed.
func answerGemini(c openai.ChatCompletionResponse, _ string, stream bool) (string, string) {
	msg := c.Choices[0].Message
	var parts []map[string]any
	if msg.Content != "" {
		parts = append(parts, map[string]any{"text": msg.Content})
	}
	for _, tc := range msg.ToolCalls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"name": tc.Function.Name, "args": json.RawMessage(tc.Function.Arguments)}})
	}
	resp := map[string]any{
		"candidates": []map[string]any{{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]int{
			"promptTokenCount": c.Usage.PromptTokens, "candidatesTokenCount": c.Usage.CompletionTokens, "totalTokenCount": c.Usage.TotalTokens,
		},
		"modelVersion": c.Model,
	}
	if !stream {
		return "application/json", mustJSON(resp)
	}
	return "text/event-stream", sse("", resp)
}
