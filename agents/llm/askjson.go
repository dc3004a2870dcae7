package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// jsonAsk is one request for a JSON object: the planner's, the reviewer's,
// the judge's and the spec calls' (see askJSON).
type jsonAsk struct {
	System, User string
	// Shape is the object asked for, as the repair message names it, e.g.
	// `{"winner": "A"|"B", "reasoning": "..."}`.
	Shape string
	// Name and Schema, when Schema is set, ask for a strict json_schema
	// reply; otherwise the reply format is JSON mode where the client is
	// configured for it.
	Name   string
	Schema json.RawMessage
}

// askJSON sends a and hands the answer to parse; an answer parse refuses
// goes back to the model once, with the reason and a's Shape. A server
// that refuses a json_schema request as malformed (HTTP 400: some do not
// know the format) is asked once more without it, the prompt alone
// saying the shape. It returns the last answer, the usage of every call,
// parse's last error, and the error of a call that failed.
func (c *Client) askJSON(ctx context.Context, budget *Budget, a jsonAsk, parse func(answer string) error) (answer string, total Usage, parseErr, err error) {
	req := openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: a.System},
		{Role: openai.ChatMessageRoleUser, Content: a.User},
	}}
	switch {
	case a.Schema != nil:
		req.ResponseFormat = &openai.ChatCompletionResponseFormat{
			Type:       openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: a.Name, Schema: a.Schema, Strict: true},
		}
	case c.cfg.JSONMode:
		req.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
	}
	repair := func(parseErr error) string {
		return fmt.Sprintf("Your answer could not be read: %v. Answer again with only the JSON object %s, no prose and no code fences.", parseErr, a.Shape)
	}
	answer, total, parseErr, err = c.chatRepair(ctx, req, budget, parse, repair)
	if a.Schema != nil && errors.Is(err, ErrBadRequest) {
		req.ResponseFormat = nil
		var more Usage
		answer, more, parseErr, err = c.chatRepair(ctx, req, budget, parse, repair)
		total = total.Plus(more)
	}
	return answer, total, parseErr, err
}

// decodeObject decodes the JSON object in answer (code fences or prose
// around it are tolerated) into v.
func decodeObject(answer string, v any) error {
	text := strings.TrimSpace(answer)
	start, end := strings.IndexByte(text, '{'), strings.LastIndexByte(text, '}')
	if start < 0 || end < start {
		return errors.New("the answer holds no JSON object")
	}
	if err := json.Unmarshal([]byte(text[start:end+1]), v); err != nil {
		return fmt.Errorf("the JSON object does not parse: %v", err)
	}
	return nil
}
