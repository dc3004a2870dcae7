package llmtest

import (
	"encoding/json"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// ModelsPath is the model listing a [Server] answers besides [Path]: GET
// returns an empty list, {"object": "list", "data": []}, since a Server
// answers whatever model a request names. Listings are not recorded as
// requests and never take a reply from the queue, so a client that checks
// the server first (statgraph run's preflight) does not shift the script.
const ModelsPath = "/v1/models"

// modelsBody is the answer to GET ModelsPath.
var modelsBody = mustJSON(map[string]any{"object": "list", "data": []any{}})

// wantsStream reports whether a chat request asks for a streamed answer
// ("stream": true), as agent CLIs such as qwen-code do.
func wantsStream(body []byte) bool {
	var req struct {
		Stream bool `json:"stream"`
	}
	return json.Unmarshal(body, &req) == nil && req.Stream
}

// streamBody turns a successful chat.completion body into the server-sent
// events of the same answer streamed: one chunk with the whole message (its
// tool calls numbered by index), one with the finish reason, one with the
// usage, then [DONE]. ok is false when body is not a completion with a
// choice, which is then sent as it is.
func streamBody(body string) (string, bool) {
	var c openai.ChatCompletionResponse
	if json.Unmarshal([]byte(body), &c) != nil || len(c.Choices) == 0 {
		return "", false
	}
	msg := c.Choices[0].Message
	delta := openai.ChatCompletionStreamChoiceDelta{Role: openai.ChatMessageRoleAssistant, Content: msg.Content}
	for i, tc := range msg.ToolCalls {
		tc.Index = &i
		delta.ToolCalls = append(delta.ToolCalls, tc)
	}
	chunk := func(choices []openai.ChatCompletionStreamChoice, usage *openai.Usage) string {
		return "data: " + mustJSON(openai.ChatCompletionStreamResponse{
			ID: c.ID, Object: "chat.completion.chunk", Created: c.Created, Model: c.Model,
			Choices: choices, Usage: usage,
		}) + "\n\n"
	}
	var b strings.Builder
	b.WriteString(chunk([]openai.ChatCompletionStreamChoice{{Delta: delta}}, nil))
	b.WriteString(chunk([]openai.ChatCompletionStreamChoice{{Delta: openai.ChatCompletionStreamChoiceDelta{}, FinishReason: c.Choices[0].FinishReason}}, nil))
	b.WriteString(chunk([]openai.ChatCompletionStreamChoice{}, &c.Usage))
	b.WriteString("data: [DONE]\n\n")
	return b.String(), true
}
