package llm

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

func TestRateLimitReset(t *testing.T) {
	now := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"none", nil, 0},
		{"Retry-After seconds", map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{"Retry-After HTTP date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{"Retry-After date in the past", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0},
		{"retry-after-ms", map[string]string{"retry-after-ms": "20"}, 20 * time.Millisecond},
		{"reset-requests minutes", map[string]string{"x-ratelimit-reset-requests": "6m0s"}, 6 * time.Minute},
		{"reset-tokens seconds", map[string]string{"x-ratelimit-reset-tokens": "1s"}, time.Second},
		{"reset-tokens milliseconds", map[string]string{"x-ratelimit-reset-tokens": "20ms"}, 20 * time.Millisecond},
		{"the longer reset wins", map[string]string{"x-ratelimit-reset-requests": "1h2m3.5s", "x-ratelimit-reset-tokens": "20ms"}, time.Hour + 2*time.Minute + 3500*time.Millisecond},
		{"bare seconds", map[string]string{"x-ratelimit-reset-requests": "12"}, 12 * time.Second},
		{"Retry-After wins over reset", map[string]string{"Retry-After": "3", "x-ratelimit-reset-requests": "6m0s"}, 3 * time.Second},
		{"unparsable", map[string]string{"x-ratelimit-reset-requests": "soon", "Retry-After": "later"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			got := rateLimitReset(h, now)
			if got != tt.want {
				t.Errorf("rateLimitReset(%v) = %v; want %v", tt.header, got, tt.want)
			}
		})
	}
}

func TestIsBilling(t *testing.T) {
	tests := []struct {
		code, msg string
		want      bool
	}{
		{"insufficient_quota", "You exceeded your current quota", true},
		{"", "You exceeded your current quota, please check your plan and billing details.", true},
		{"", "Your credit balance is too low to access the Anthropic API.", true},
		{"billing_hard_limit_reached", "", true},
		{"rate_limit_exceeded", "Rate limit reached for gpt-4o in organization org-x on requests per min (RPM): Limit 3, Used 3.", false},
		{"", "slow down", false},
	}
	for _, tt := range tests {
		if got := IsBilling(tt.code, tt.msg); got != tt.want {
			t.Errorf("IsBilling(%q, %q) = %v; want %v", tt.code, tt.msg, got, tt.want)
		}
	}
}

// TestChatLimit: a 429 whose reset is further away than ParkAfter returns
// a *LimitError at once (one request, no wait), and so does a 429 with a
// reset that lasts through every retry; a 429 with no reset stays
// ErrRateLimited.
func TestChatLimit(t *testing.T) {
	limited := func(h map[string]string) llmtest.Reply {
		r := llmtest.Error(http.StatusTooManyRequests, "usage limit reached for the day", "rate_limit_exceeded")
		r.Header = h
		return r
	}
	t.Run("reset beyond ParkAfter", func(t *testing.T) {
		f := llmtest.NewServer(t, limited(map[string]string{"x-ratelimit-reset-requests": "6m0s"}))
		c, sleeps := newTestClient(t, f, nil)
		before := time.Now()
		_, err := c.Chat(t.Context(), userRequest("hi"), nil)
		require.ErrorIs(t, err, ErrLimit)
		le, ok := errors.AsType[*LimitError](err)
		require.True(t, ok)
		assert.WithinRange(t, le.Until, before.Add(6*time.Minute), time.Now().Add(6*time.Minute))
		assert.Contains(t, le.Reason, "usage limit reached for the day")
		assert.Len(t, f.Requests(), 1, "not retried")
		assert.Empty(t, sleeps.Waits(), "not waited for inside the call")
	})
	t.Run("reset lasts through the retries", func(t *testing.T) {
		r := limited(map[string]string{"Retry-After": "3"})
		f := llmtest.NewServer(t, r, r, r, r)
		c, sleeps := newTestClient(t, f, nil)
		_, err := c.Chat(t.Context(), userRequest("hi"), nil)
		require.ErrorIs(t, err, ErrLimit)
		assert.Len(t, f.Requests(), 4)
		assert.Equal(t, []time.Duration{3 * time.Second, 3 * time.Second, 3 * time.Second}, sleeps.Waits())
	})
	t.Run("ParkAfter below the reset", func(t *testing.T) {
		f := llmtest.NewServer(t, limited(map[string]string{"Retry-After": "3"}))
		c, sleeps := newTestClient(t, f, func(cfg *Config) { cfg.ParkAfter = time.Second })
		_, err := c.Chat(t.Context(), userRequest("hi"), nil)
		require.ErrorIs(t, err, ErrLimit)
		assert.Len(t, f.Requests(), 1)
		assert.Empty(t, sleeps.Waits())
	})
	t.Run("no reset given", func(t *testing.T) {
		r := limited(nil)
		f := llmtest.NewServer(t, r, r, r, r)
		c, _ := newTestClient(t, f, nil)
		_, err := c.Chat(t.Context(), userRequest("hi"), nil)
		require.ErrorIs(t, err, ErrRateLimited)
		assert.NotErrorIs(t, err, ErrLimit)
	})
}
