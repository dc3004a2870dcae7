package llm

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// LimitError is a usage or rate limit that outlasts what a call waits for
// itself: the provider takes requests again at Until, and not before.
// Both the model client (an HTTP 429 whose reset is further away than
// Config.ParkAfter, or that persists through every retry with a reset
// time) and the agent CLIs' presets (their own limit messages, see
// agents.Preset) produce it, so the dispatcher parks the task until Until
// instead of failing it. Until is zero when the limit came with no reset
// time (a real agent CLI giving up on a bare 429): the dispatcher then
// waits its default (dispatch.Dispatcher.ParkDefault). Reason is the
// provider's own message, with the API key removed. errors.Is matches it
// against [ErrLimit].
type LimitError struct {
	Until  time.Time
	Reason string
}

// Error reads "llm: usage or rate limit reached until <time>: <reason>",
// or "... reached, no reset time given: <reason>" when Until is zero.
func (e *LimitError) Error() string {
	s := fmt.Sprintf("%s until %s", ErrLimit.Error(), e.Until.Format(time.RFC3339))
	if e.Until.IsZero() {
		s = ErrLimit.Error() + ", no reset time given"
	}
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// Is reports whether target is ErrLimit.
func (e *LimitError) Is(target error) bool { return target == ErrLimit }

// rateLimitReset returns how long a 429 response asks to wait: its
// retry-after-ms or Retry-After header (seconds or an HTTP date, see
// retryAfter), else the longer of OpenAI's x-ratelimit-reset-requests and
// x-ratelimit-reset-tokens (Go-style durations such as "6m0s", "1s",
// "20ms"). It returns 0 when none is present or parses.
func rateLimitReset(h http.Header, now time.Time) time.Duration {
	if d := retryAfter(h, now); d > 0 {
		return d
	}
	var longest time.Duration
	for _, k := range []string{"x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"} {
		if d, ok := parseResetDuration(h.Get(k)); ok {
			longest = max(longest, d)
		}
	}
	return longest
}

// parseResetDuration reads a reset header's duration: Go's syntax ("6m0s",
// "1h2m3.5s", "20ms"), which OpenAI uses, or a bare number of seconds.
func parseResetDuration(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d, true
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	return 0, false
}

// IsBilling reports whether an error code or message says the account has
// no quota or credit left, which no wait will restore: OpenAI's
// insufficient_quota and billing codes, or a message speaking of billing,
// the quota being exceeded for the plan, or a credit balance too low
// (Anthropic's wording, which Claude Code prints).
func IsBilling(code, msg string) bool {
	switch code {
	case "insufficient_quota", "billing_hard_limit_reached", "billing_not_active":
		return true
	}
	m := strings.ToLower(msg)
	for _, s := range []string{"insufficient_quota", "billing", "credit balance is too low", "exceeded your current quota", "out of credits"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}
