package llm

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Price is what a model costs, in US dollars per million tokens. In JSON
// (tasks.json's defaults.prices, a --prices file) it is
// {"input": 2.5, "cached_input": 1.25, "output": 10}.
type Price struct {
	Input float64 `json:"input"`
	// CachedInput is the price of input tokens read from the provider's
	// prompt cache; 0 in a price given in JSON means Input (no discount
	// known), use a tiny value for a free cache.
	CachedInput float64 `json:"cached_input"`
	Output      float64 `json:"output"`
}

// Prices maps model names to their prices. Look a model up with Price,
// which also finds dated and provider-prefixed names.
type Prices map[string]Price

// PricesDate is when the built-in price table was taken from the
// providers' pricing pages.
const PricesDate = "2025-11-01"

// defaultPrices is the built-in table: list prices of the standard tier
// (no batch discount; the lowest context tier where the price depends on
// the prompt's length), USD per million tokens, as of PricesDate. Prices
// change: tasks.json's defaults.prices and run's --prices override them.
var defaultPrices = Prices{
	// OpenAI (openai.com/api/pricing)
	"gpt-4o":       {Input: 2.50, CachedInput: 1.25, Output: 10.00},
	"gpt-4o-mini":  {Input: 0.15, CachedInput: 0.075, Output: 0.60},
	"gpt-4.1":      {Input: 2.00, CachedInput: 0.50, Output: 8.00},
	"gpt-4.1-mini": {Input: 0.40, CachedInput: 0.10, Output: 1.60},
	"gpt-4.1-nano": {Input: 0.10, CachedInput: 0.025, Output: 0.40},
	"gpt-5":        {Input: 1.25, CachedInput: 0.125, Output: 10.00},
	"gpt-5-mini":   {Input: 0.25, CachedInput: 0.025, Output: 2.00},
	"gpt-5-nano":   {Input: 0.05, CachedInput: 0.005, Output: 0.40},
	"gpt-5-codex":  {Input: 1.25, CachedInput: 0.125, Output: 10.00},
	"o3":           {Input: 2.00, CachedInput: 0.50, Output: 8.00},
	"o3-mini":      {Input: 1.10, CachedInput: 0.55, Output: 4.40},
	"o4-mini":      {Input: 1.10, CachedInput: 0.275, Output: 4.40},
	// Anthropic (anthropic.com/pricing; cached input is a cache read)
	"claude-opus-4":     {Input: 15.00, CachedInput: 1.50, Output: 75.00},
	"claude-opus-4-1":   {Input: 15.00, CachedInput: 1.50, Output: 75.00},
	"claude-sonnet-4":   {Input: 3.00, CachedInput: 0.30, Output: 15.00},
	"claude-sonnet-4-5": {Input: 3.00, CachedInput: 0.30, Output: 15.00},
	"claude-haiku-4-5":  {Input: 1.00, CachedInput: 0.10, Output: 5.00},
	"claude-3-5-haiku":  {Input: 0.80, CachedInput: 0.08, Output: 4.00},
	"claude-3-7-sonnet": {Input: 3.00, CachedInput: 0.30, Output: 15.00},
	// Google (ai.google.dev/gemini-api/docs/pricing; prompts up to 200k)
	"gemini-2.5-pro":        {Input: 1.25, CachedInput: 0.125, Output: 10.00},
	"gemini-2.5-flash":      {Input: 0.30, CachedInput: 0.03, Output: 2.50},
	"gemini-2.5-flash-lite": {Input: 0.10, CachedInput: 0.01, Output: 0.40},
	// Alibaba Cloud Model Studio, international (first tier; implicit
	// cache hits at 20% of the input price)
	"qwen3-coder-plus":  {Input: 1.00, CachedInput: 0.20, Output: 5.00},
	"qwen3-coder-flash": {Input: 0.30, CachedInput: 0.06, Output: 1.50},
	"qwen-max":          {Input: 1.60, CachedInput: 0.32, Output: 6.40},
	"qwen-plus":         {Input: 0.40, CachedInput: 0.08, Output: 1.20},
	"qwen-flash":        {Input: 0.05, CachedInput: 0.01, Output: 0.40},
}

// DefaultPrices returns a copy of the built-in price table (see
// PricesDate).
func DefaultPrices() Prices {
	out := make(Prices, len(defaultPrices))
	for k, v := range defaultPrices {
		out[k] = v
	}
	return out
}

// With returns p with over's entries added or replacing p's; an entry of
// over with no cached input price takes its input price. p is not
// changed.
func (p Prices) With(over Prices) Prices {
	out := make(Prices, len(p)+len(over))
	for k, v := range p {
		out[k] = v
	}
	for k, v := range over {
		if v.CachedInput == 0 {
			v.CachedInput = v.Input
		}
		out[strings.ToLower(k)] = v
	}
	return out
}

// Price returns the price of model: the entry of that name (case is
// ignored), else that of the name without a provider prefix
// ("openai/gpt-4o", "anthropic/claude-sonnet-4-5"), else the longest entry
// the name starts with followed by '-', '@' or ':' (dated and tagged
// variants: "gpt-4o-2024-08-06", "claude-sonnet-4-5-20250929"). ok is
// false when none matches: the model's cost is unknown.
func (p Prices) Price(model string) (Price, bool) {
	name := strings.ToLower(strings.TrimSpace(model))
	if name == "" {
		return Price{}, false
	}
	if pr, ok := p[name]; ok {
		return pr, true
	}
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
		if pr, ok := p[name]; ok {
			return pr, true
		}
	}
	best, found := "", false
	for k := range p {
		if len(k) > len(best) && len(name) > len(k) && strings.HasPrefix(name, k) && strings.ContainsRune("-@:", rune(name[len(k)])) {
			best, found = k, true
		}
	}
	return p[best], found
}

// Cost returns u with CostUSD the price of its tokens at pr (cached input
// tokens at the cached price) and Unpriced 0.
func (pr Price) Cost(u Usage) Usage {
	u.CostUSD = (float64(u.Prompt-u.Cached)*pr.Input + float64(u.Cached)*pr.CachedInput + float64(u.Completion)*pr.Output) / 1e6
	u.Unpriced = 0
	return u
}

// Priced returns u priced at model's price in p, or, when p has none,
// with its tokens counted as Unpriced and no cost.
func (p Prices) Priced(model string, u Usage) Usage {
	if pr, ok := p.Price(model); ok {
		return pr.Cost(u)
	}
	u.CostUSD, u.Unpriced = 0, u.Tokens()
	return u
}

// ReadPrices reads a prices file: a JSON object mapping model names to
// {"input", "cached_input", "output"} in dollars per million tokens, as
// tasks.json's defaults.prices. It fails, naming the file and the entry,
// when the file cannot be read, is not that object, or holds a negative
// price.
func ReadPrices(path string) (Prices, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("prices file: %w", err)
	}
	var p Prices
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("prices file %s: %v; want {\"model\": {\"input\": 2.5, \"cached_input\": 1.25, \"output\": 10}, ...} in dollars per million tokens", path, err)
	}
	for m, pr := range p {
		if pr.Input < 0 || pr.CachedInput < 0 || pr.Output < 0 {
			return nil, fmt.Errorf("prices file %s: model %q has a negative price; prices are dollars per million tokens, 0 or more", path, m)
		}
	}
	return p, nil
}
