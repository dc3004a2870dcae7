package llm

import (
	"encoding/json"
	"math"
	"testing"

	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

func TestPricesLookup(t *testing.T) {
	p := DefaultPrices()
	for _, tc := range []struct {
		model string
		want  string // the table entry; "" for none
	}{
		{"gpt-4o", "gpt-4o"},
		{"GPT-4o", "gpt-4o"},
		{"gpt-4o-2024-08-06", "gpt-4o"},
		{"gpt-4o-mini-2024-07-18", "gpt-4o-mini"},
		{"openai/gpt-4.1-mini", "gpt-4.1-mini"},
		{"anthropic/claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
		{"claude-sonnet-4-20250514", "claude-sonnet-4"},
		{"o3-mini", "o3-mini"},
		{"o3", "o3"},
		{"gemini-2.5-flash-lite", "gemini-2.5-flash-lite"},
		{"gpt-4oo", ""},
		{"qwen2.5-coder:7b", ""},
		{"", ""},
	} {
		got, ok := p.Price(tc.model)
		if tc.want == "" {
			assert.False(t, ok, "%q has no price; got %v", tc.model, got)
			continue
		}
		assert.True(t, ok, "%q", tc.model)
		assert.Equal(t, defaultPrices[tc.want], got, "%q prices as %s", tc.model, tc.want)
	}
	over := p.With(Prices{"My-Local": {Input: 1, Output: 2}})
	got, ok := over.Price("my-local")
	require.True(t, ok)
	assert.Equal(t, Price{Input: 1, CachedInput: 1, Output: 2}, got, "no cached price given: the input price")
	_, ok = p.Price("my-local")
	assert.False(t, ok, "With does not change its receiver")
}

func TestPriceCost(t *testing.T) {
	pr := Price{Input: 2.5, CachedInput: 1.25, Output: 10}
	u := pr.Cost(Usage{Prompt: 1000, Cached: 400, Completion: 200, Total: 1200})
	want := (600*2.5 + 400*1.25 + 200*10) / 1e6
	assert.InDelta(t, want, u.CostUSD, 1e-12)
	assert.True(t, u.CostKnown())
	unknown := DefaultPrices().Priced("no-such-model", Usage{Prompt: 10, Completion: 5})
	assert.False(t, unknown.CostKnown(), "an unknown model's cost is unknown, not 0")
	assert.Equal(t, 15, unknown.Unpriced)
	assert.Nil(t, unknown.KnownCost())
	assert.Equal(t, "unknown", FormatUSD(unknown.CostUSD, unknown.CostKnown()))
	assert.Nil(t, Usage{}.OrTokens(5).KnownCost(), "tokens counted without a usage have an unknown cost")
	assert.Equal(t, u, u.OrTokens(5))
}

// TestBudgetUSD: a dollar limit refuses the next call once the priced
// spend reaches it, and says which budget and what to raise.
func TestBudgetUSD(t *testing.T) {
	global := NewBudgetOf(Limit{USD: 0.01}, nil, nil)
	task := NewBudget(0, global)
	task.Add(Usage{Prompt: 100, Completion: 10, Total: 110, CostUSD: 0.006})
	require.NoError(t, task.Check(0))
	task.Add(Usage{Prompt: 100, Completion: 10, Total: 110, CostUSD: 0.006})
	err := task.Check(0)
	require.ErrorIs(t, err, ErrBudget)
	_, isGlobal := GlobalBudget(err)
	assert.True(t, isGlobal)
	assert.EqualError(t, err, "llm: budget exhausted: global budget of $0.01 spent ($0.0120 used); raise --budget-usd or lower the work per task")
	own := NewBudgetOf(Limit{USD: 0.005}, nil, nil)
	own.Add(Usage{Total: 1, Prompt: 1, CostUSD: 0.005})
	err = own.Check(0)
	_, isGlobal = GlobalBudget(err)
	assert.False(t, isGlobal)
	assert.ErrorContains(t, err, "task budget of $0.01 spent ($0.0050 used); raise budget_usd")
	assert.InDelta(t, 0.012, global.Total().CostUSD, 1e-12)
	run := NewRunBudget(Limit{Tokens: 10}, nil)
	run.Add(Usage{Prompt: 10, Total: 10})
	_, isGlobal = GlobalBudget(run.Check(0))
	assert.True(t, isGlobal, "a run's budget checked itself (before a task starts) is the global one")
}

// TestBudgetRefusesImplausibleUsage: a negative or implausible usage is not
// charged (a negative one would lower the spend) and leaves a warning.
func TestBudgetRefusesImplausibleUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		u    Usage
		warn string
	}{
		{"negative", Usage{Prompt: -500, Completion: 10, Total: -490}, "-500 input tokens is negative"},
		{"too large", Usage{Prompt: MaxCallTokens + 1, Total: MaxCallTokens + 1}, "implausible"},
		{"total under its parts", Usage{Prompt: 100, Completion: 50, Total: 10}, "less than its parts"},
		{"more cached than input", Usage{Prompt: 10, Cached: 20, Total: 10}, "more than its 10 input tokens"},
		{"negative cost", Usage{Prompt: 10, Total: 10, CostUSD: -1}, "not a spend"},
		{"NaN cost", Usage{Prompt: 10, Total: 10, CostUSD: math.NaN()}, "not a spend"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			global := NewBudget(0, nil)
			b := NewBudget(1000, global)
			b.Add(Usage{Prompt: 100, Completion: 20, Total: 120})
			b.Add(tc.u)
			assert.Equal(t, 120, b.Spent(), "the refused usage is not charged")
			assert.Equal(t, 120, global.Spent())
			w := b.TakeWarnings()
			require.Len(t, w, 1)
			assert.Contains(t, w[0], "refused, not counted")
			assert.Contains(t, w[0], tc.warn)
			assert.Empty(t, b.TakeWarnings(), "taken once")
		})
	}
	b := NewBudget(0, nil)
	b.AddRun(Usage{Prompt: 2 * MaxCallTokens, Total: 2 * MaxCallTokens})
	assert.Equal(t, 2*MaxCallTokens, b.Spent(), "an agent CLI's run may pass one call's bound")
	assert.Empty(t, b.TakeWarnings())
}

// TestChatPricesCachedTokens: a call's usage is priced at its model's
// price, the cached input tokens the server reports at the cached price.
func TestChatPricesCachedTokens(t *testing.T) {
	body, err := json.Marshal(openai.ChatCompletionResponse{
		ID: "x", Object: "chat.completion", Model: "gpt-4o-2024-08-06",
		Choices: []openai.ChatCompletionChoice{{Message: openai.ChatCompletionMessage{Role: "assistant", Content: "hi"}, FinishReason: "stop"}},
		Usage: openai.Usage{PromptTokens: 2000, CompletionTokens: 300, TotalTokens: 2300,
			PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 1500}},
	})
	require.NoError(t, err)
	s := llmtest.NewServer(t, llmtest.Reply{Body: string(body)})
	c, _ := newTestClient(t, s, func(cfg *Config) { cfg.Model = "gpt-4o" })
	b := NewBudget(0, nil)
	_, err = c.Chat(t.Context(), openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}}}, b)
	require.NoError(t, err)
	pr := defaultPrices["gpt-4o"]
	want := (500*pr.Input + 1500*pr.CachedInput + 300*pr.Output) / 1e6
	got := b.Total()
	assert.Equal(t, 1500, got.Cached)
	assert.InDelta(t, want, got.CostUSD, 1e-12)
	assert.True(t, got.CostKnown())
}
