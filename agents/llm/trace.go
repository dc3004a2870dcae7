package llm

import (
	"context"
	"net/url"
	"strconv"

	openai "github.com/sashabaranov/go-openai"

	"github.com/statgraph/statgraph/internal/obs"
)

// startCall reports a chat call to the trace hook ctx carries, if any (see
// package internal/obs), with the OpenTelemetry GenAI semantic conventions'
// attributes: one operation per Chat, its retries included. Without a hook
// it returns a nil End, so that the caller builds no attributes.
func (c *Client) startCall(ctx context.Context, model string) (context.Context, obs.End) {
	if !obs.Enabled(ctx) {
		return ctx, nil
	}
	attrs := []obs.Attr{
		// First, so that the tracing hook (tasks/trace.go) makes a client span.
		obs.String("gen_ai.operation.name", "chat"),
		obs.String("gen_ai.provider.name", "openai"),
		obs.String("gen_ai.system", "openai"),
		obs.String("gen_ai.request.model", model),
	}
	if u, err := url.Parse(c.baseURL); err == nil && u.Hostname() != "" {
		attrs = append(attrs, obs.String("server.address", u.Hostname()))
		if p, err := strconv.Atoi(u.Port()); err == nil {
			attrs = append(attrs, obs.Int("server.port", p))
		}
	}
	return obs.Start(ctx, "chat "+model, attrs...)
}

// callAttrs are what a response tells about a call: the model that
// answered, the response id, the tokens in and out and why it stopped.
func callAttrs(resp openai.ChatCompletionResponse, attempts int) []obs.Attr {
	reasons := make([]string, len(resp.Choices))
	for i, ch := range resp.Choices {
		reasons[i] = string(ch.FinishReason)
	}
	return []obs.Attr{
		obs.String("gen_ai.response.model", resp.Model),
		obs.String("gen_ai.response.id", resp.ID),
		obs.Int("gen_ai.usage.input_tokens", resp.Usage.PromptTokens),
		obs.Int("gen_ai.usage.output_tokens", resp.Usage.CompletionTokens),
		{Key: "gen_ai.response.finish_reasons", Value: reasons},
		obs.Int("statgraph.llm.attempts", attempts),
	}
}
