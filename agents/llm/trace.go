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
// answered, the response id, the tokens in and out (u, as charged), its
// cost and why it stopped.
func callAttrs(resp openai.ChatCompletionResponse, u Usage, attempts int) []obs.Attr {
	reasons := make([]string, len(resp.Choices))
	for i, ch := range resp.Choices {
		reasons[i] = string(ch.FinishReason)
	}
	return append([]obs.Attr{
		obs.String("gen_ai.response.model", resp.Model),
		obs.String("gen_ai.response.id", resp.ID),
		{Key: "gen_ai.response.finish_reasons", Value: reasons},
		obs.Int("statgraph.llm.attempts", attempts),
	}, UsageAttrs(u)...)
}

// UsageAttrs are the trace attributes of a usage: the GenAI conventions'
// gen_ai.usage.input_tokens and gen_ai.usage.output_tokens, the cached
// input tokens (gen_ai.usage.cache_read.input_tokens) when there are any,
// and the cost in US dollars (gen_ai.usage.cost, not in the conventions
// yet) when it is known.
func UsageAttrs(u Usage) []obs.Attr {
	attrs := []obs.Attr{
		obs.Int("gen_ai.usage.input_tokens", u.Prompt),
		obs.Int("gen_ai.usage.output_tokens", u.Completion),
	}
	if u.Cached > 0 {
		attrs = append(attrs, obs.Int("gen_ai.usage.cache_read.input_tokens", u.Cached))
	}
	if u.CostKnown() {
		attrs = append(attrs, obs.Float("gen_ai.usage.cost", u.CostUSD))
	}
	return attrs
}
