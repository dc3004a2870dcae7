package llm

import (
	"fmt"
	"math"
)

// MaxCallTokens is the most tokens one model call may report: a usage over
// it in any count is implausible (no model's context holds it) and is
// refused (see [Usage.Check]).
const MaxCallTokens = 10_000_000

// MaxRunTokens is the most tokens one run of an agent CLI may report (its
// many model calls, cache reads included) before its usage is refused as
// implausible.
const MaxRunTokens = 1_000_000_000

// Usage is the token count and cost of one call, or the sum of several.
// Its JSON names follow the OpenTelemetry GenAI conventions' usage
// attributes.
type Usage struct {
	// Prompt counts the input tokens, Cached among them.
	Prompt int `json:"input_tokens,omitempty"`
	// Cached counts the input tokens the provider read from its prompt
	// cache (prompt_tokens_details.cached_tokens), billed at the cached
	// input price.
	Cached     int `json:"cached_input_tokens,omitempty"`
	Completion int `json:"output_tokens,omitempty"`
	Total      int `json:"total_tokens,omitempty"`
	// CostUSD is the price of the priced tokens in US dollars: from the
	// price table ([Prices]), or as an agent CLI reported it.
	CostUSD float64 `json:"cost_usd,omitempty"`
	// Unpriced counts the tokens CostUSD leaves out because their model
	// has no price. The cost is known only when Unpriced is 0 (see
	// CostKnown): an unknown price is never counted as 0.
	Unpriced int `json:"unpriced_tokens,omitempty"`
}

// Plus returns the sum of u and v: element-wise, but for Total, which is
// the sum of their Tokens (so that a usage without a total still counts).
func (u Usage) Plus(v Usage) Usage {
	return Usage{
		Prompt:     u.Prompt + v.Prompt,
		Cached:     u.Cached + v.Cached,
		Completion: u.Completion + v.Completion,
		Total:      u.Tokens() + v.Tokens(),
		CostUSD:    u.CostUSD + v.CostUSD,
		Unpriced:   u.Unpriced + v.Unpriced,
	}
}

// Sub returns u minus v, element-wise: the usage spent between two totals.
func (u Usage) Sub(v Usage) Usage {
	return Usage{
		Prompt:     u.Prompt - v.Prompt,
		Cached:     u.Cached - v.Cached,
		Completion: u.Completion - v.Completion,
		Total:      u.Total - v.Total,
		CostUSD:    u.CostUSD - v.CostUSD,
		Unpriced:   u.Unpriced - v.Unpriced,
	}
}

// Tokens is the number of tokens u charges to a budget: Total, or
// Prompt+Completion when a server reports no total.
func (u Usage) Tokens() int {
	if u.Total > 0 {
		return u.Total
	}
	return u.Prompt + u.Completion
}

// CostKnown reports whether CostUSD is the whole cost of u: no token of it
// is unpriced.
func (u Usage) CostKnown() bool { return u.Unpriced == 0 }

// Check returns an error saying what is wrong when u cannot be a real
// usage: a negative count or cost, a count over limit tokens, more cached
// tokens than input tokens, or a total smaller than its parts. Such a
// usage is refused (see [Budget.Add]): counting it would lower the spend
// (a negative count) or stop a run for nothing.
func (u Usage) Check(limit int) error {
	counts := []struct {
		name string
		n    int
	}{{"input", u.Prompt}, {"cached input", u.Cached}, {"output", u.Completion}, {"total", u.Total}, {"unpriced", u.Unpriced}}
	for _, c := range counts {
		switch {
		case c.n < 0:
			return fmt.Errorf("%d %s tokens is negative", c.n, c.name)
		case c.n > limit:
			return fmt.Errorf("%d %s tokens is more than %d, implausible", c.n, c.name, limit)
		}
	}
	switch {
	case u.CostUSD < 0 || math.IsNaN(u.CostUSD) || math.IsInf(u.CostUSD, 0):
		return fmt.Errorf("a cost of %v dollars is not a spend", u.CostUSD)
	case u.Cached > u.Prompt:
		return fmt.Errorf("%d cached input tokens is more than its %d input tokens", u.Cached, u.Prompt)
	case u.Total > 0 && u.Total < u.Prompt+u.Completion:
		return fmt.Errorf("a total of %d tokens is less than its parts (%d input + %d output)", u.Total, u.Prompt, u.Completion)
	}
	return nil
}

// FormatUSD writes a cost for people: "$0.0123" (four decimals below a
// dollar, two above), or "unknown" when known is false.
func FormatUSD(usd float64, known bool) string {
	switch {
	case !known:
		return "unknown"
	case usd < 1:
		return fmt.Sprintf("$%.4f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}

// OrTokens returns u when it counts at least n tokens, else n tokens of
// unknown cost: what a count of tokens alone (an older checkpoint, a
// worker that reports no usage) says of a spend.
func (u Usage) OrTokens(n int) Usage {
	if u.Tokens() >= n {
		return u
	}
	return Usage{Total: n, Unpriced: n}
}

// KnownCost returns a pointer to CostUSD when the cost is known, else nil:
// a JSON null, never a made-up 0.
func (u Usage) KnownCost() *float64 {
	if !u.CostKnown() {
		return nil
	}
	c := u.CostUSD
	return &c
}
