package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/statgraph/statgraph/agents/llm/llmtest"
)

func TestNewRequiresModel(t *testing.T) {
	_, err := New(Config{APIKey: testKey})
	require.ErrorIs(t, err, ErrNoModel)
	for _, want := range []string{"--model", "STATGRAPH_MODEL", `"model"`} {
		assert.Contains(t, err.Error(), want)
	}
	c, err := New(Config{Model: "llama3"})
	require.NoError(t, err, "an empty API key is allowed for local servers")
	assert.Equal(t, "llama3", c.Model())
}

func TestConfigFromEnv(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", testKey)
	t.Setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
	t.Setenv("STATGRAPH_MODEL", "qwen2.5-coder")
	got := ConfigFromEnv()
	assert.Equal(t, Config{APIKey: testKey, BaseURL: "http://localhost:11434/v1", Model: "qwen2.5-coder"}, got)
}

func TestChatRecordsUsage(t *testing.T) {
	f := llmtest.NewServer(t, llmtest.Text("hello", 40))
	c, sleeps := newTestClient(t, f, nil)
	b := NewBudget(0, nil)
	resp, err := c.Chat(t.Context(), userRequest("hi"), b)
	require.NoError(t, err)
	assert.Equal(t, "hello", resp.Choices[0].Message.Content)
	assert.Equal(t, Usage{Prompt: 30, Completion: 10, Total: 40}, UsageOf(resp))
	assert.Equal(t, 40, b.Spent())
	assert.Empty(t, sleeps.Waits())
	reqs := f.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "test-model", reqs[0].Model, "the client's model fills an empty request model")
	assert.Equal(t, []string{"Bearer " + testKey}, f.AuthHeaders())
}

func TestChatHonoursRetryAfter(t *testing.T) {
	tests := []struct {
		name      string
		header    map[string]string
		maxWait   time.Duration
		parkAfter time.Duration
		want      time.Duration
	}{
		{"Retry-After seconds", map[string]string{"Retry-After": "1"}, 0, 0, time.Second},
		{"retry-after-ms", map[string]string{"retry-after-ms": "250"}, 0, 0, 250 * time.Millisecond},
		{"retry-after-ms wins over Retry-After", map[string]string{"retry-after-ms": "1500", "Retry-After": "2"}, 0, 0, 1500 * time.Millisecond},
		{"x-ratelimit-reset-tokens", map[string]string{"x-ratelimit-reset-tokens": "1.5s", "x-ratelimit-reset-requests": "20ms"}, 0, 0, 1500 * time.Millisecond},
		{"Retry-After capped at MaxBackoff", map[string]string{"Retry-After": "120"}, 5 * time.Second, time.Hour, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limited := llmtest.Error(http.StatusTooManyRequests, "slow down", "rate_limit_exceeded")
			limited.Header = tt.header
			f := llmtest.NewServer(t, limited, llmtest.Text("ok", 10))
			c, sleeps := newTestClient(t, f, func(cfg *Config) { cfg.MaxBackoff, cfg.ParkAfter = tt.maxWait, tt.parkAfter })
			resp, err := c.Chat(t.Context(), userRequest("hi"), nil)
			require.NoError(t, err)
			assert.Equal(t, "ok", resp.Choices[0].Message.Content)
			assert.Len(t, f.Requests(), 2)
			assert.Equal(t, []time.Duration{tt.want}, sleeps.Waits())
		})
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	h := http.Header{}
	h.Set("Retry-After", now.Add(7*time.Second).Format(http.TimeFormat))
	assert.Equal(t, 7*time.Second, retryAfter(h, now))
	h.Set("Retry-After", now.Add(-time.Minute).Format(http.TimeFormat))
	assert.Zero(t, retryAfter(h, now), "a date in the past asks for no wait")
	h.Set("Retry-After", "soon")
	assert.Zero(t, retryAfter(h, now), "an unparsable value is ignored")
}

func TestBackoffFullJitterWithinCap(t *testing.T) {
	for n := 1; n <= 8; n++ {
		ceiling := min(time.Second<<(n-1), 10*time.Second)
		seen := map[time.Duration]bool{}
		for range 200 {
			d := backoff(n, time.Second, 10*time.Second, 0)
			require.GreaterOrEqual(t, d, time.Duration(0))
			require.LessOrEqual(t, d, ceiling, "retry %d", n)
			seen[d] = true
		}
		assert.Greater(t, len(seen), 1, "retry %d: waits are jittered", n)
	}
	for _, n := range []int{62, 63, 64, 100} {
		d := backoff(n, time.Second, 10*time.Second, 0)
		assert.True(t, d >= 0 && d <= 10*time.Second, "retry %d: %s must not overflow past the cap", n, d)
	}
}

func TestChatEndlessServerErrors(t *testing.T) {
	defer goleak.VerifyNone(t)
	f := llmtest.NewServer(t)
	fail := llmtest.Error(http.StatusInternalServerError, "upstream exploded", "")
	f.SetFallback(llmtest.Always(fail))
	logs := &logRecorder{}
	c, sleeps := newTestClient(t, f, func(cfg *Config) { cfg.Logf = logs.logf })
	_, err := c.Chat(t.Context(), userRequest("hi"), nil)
	require.ErrorIs(t, err, ErrServer)
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusInternalServerError, apiErr.Status)
	assert.Equal(t, 4, apiErr.Attempts)
	assert.Contains(t, err.Error(), "upstream exploded")
	assert.Contains(t, err.Error(), "4 attempts")
	assert.Len(t, f.Requests(), 4, "one attempt and MaxRetries=3 retries")
	assert.Len(t, sleeps.Waits(), 3)
	assert.Len(t, logs.lines(), 3, "one log line per retry")
	f.Close()
}

func TestChatDoesNotRetryClientErrors(t *testing.T) {
	tests := []struct {
		name     string
		reply    llmtest.Reply
		sentinel error
		kind     string
		want     []string
	}{
		{"401", llmtest.Error(401, "Incorrect API key provided", "invalid_api_key"), ErrAuth, KindAuth, []string{"HTTP 401", "check OPENAI_API_KEY"}},
		{"403", llmtest.Error(403, "not allowed", ""), ErrAuth, KindAuth, []string{"check OPENAI_API_KEY"}},
		{"404 model", llmtest.Error(404, "The model `test-model` does not exist", "model_not_found"), ErrNotFound, KindNotFound,
			[]string{`model "test-model" not found at http://`, "--model", "STATGRAPH_MODEL"}},
		{"400 context length", llmtest.Error(400, "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.", "context_length_exceeded"),
			ErrContextLength, KindContextLength, []string{"prompt too long: lower"}},
		{"400 context length by wording", llmtest.Error(400, "prompt is too long: 210000 tokens > 200000 maximum", ""), ErrContextLength, KindContextLength, []string{"prompt too long"}},
		{"400 other", llmtest.Error(400, "tools are not supported", ""), ErrBadRequest, KindBadRequest, []string{"supports tool calls"}},
		{"429 quota", llmtest.Error(429, "You exceeded your current quota", "insufficient_quota"), ErrQuota, KindQuota, []string{"quota is exhausted", "no reset will come"}},
		{"429 billing", llmtest.Error(429, "You exceeded your current quota, please check your plan and billing details.", ""), ErrQuota, KindQuota, []string{"add credit"}},
		{"402 credit", llmtest.Error(402, "Your credit balance is too low to access the API.", ""), ErrQuota, KindQuota, []string{"add credit"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := llmtest.NewServer(t, tt.reply)
			c, sleeps := newTestClient(t, f, nil)
			_, err := c.Chat(t.Context(), userRequest("hi"), nil)
			require.ErrorIs(t, err, tt.sentinel)
			var apiErr *APIError
			require.ErrorAs(t, err, &apiErr)
			assert.Equal(t, tt.kind, apiErr.Kind)
			assert.Equal(t, tt.reply.Status, apiErr.Status)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Len(t, f.Requests(), 1, "never retried")
			assert.Empty(t, sleeps.Waits())
		})
	}
}

func TestChatRetriesTimeouts(t *testing.T) {
	slow := llmtest.Text("too late", 5)
	slow.Delay = 5 * time.Second
	f := llmtest.NewServer(t, slow, llmtest.Text("ok", 5))
	c, sleeps := newTestClient(t, f, func(cfg *Config) { cfg.Timeout = time.Second }) // long enough for "ok" on a loaded machine
	start := time.Now()
	resp, err := c.Chat(t.Context(), userRequest("hi"), nil)
	require.NoError(t, err)
	assert.Equal(t, "ok", resp.Choices[0].Message.Content)
	assert.Less(t, time.Since(start), 3*time.Second)
	assert.Len(t, sleeps.Waits(), 1)
}

func TestChatConnectionRefused(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	s := &llmtest.SleepRecorder{}
	c, err := New(Config{APIKey: testKey, BaseURL: url + "/v1", Model: "m", MaxRetries: 2, Sleep: s.Sleep,
		HTTPClient: &http.Client{Transport: &http.Transport{}}})
	require.NoError(t, err)
	_, err = c.Chat(t.Context(), userRequest("hi"), nil)
	require.ErrorIs(t, err, ErrServer)
	var apiErr *APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, KindConnection, apiErr.Kind)
	assert.Equal(t, 3, apiErr.Attempts)
	assert.Contains(t, err.Error(), "check OPENAI_BASE_URL")
	assert.Len(t, s.Waits(), 2)
}

func TestChatStopsWaitingWhenContextEnds(t *testing.T) {
	limited := llmtest.Error(http.StatusTooManyRequests, "slow down", "")
	limited.Header = map[string]string{"Retry-After": "20"}
	f := llmtest.NewServer(t, limited)
	c, _ := newTestClient(t, f, func(cfg *Config) { cfg.Sleep = nil })
	ctx, cancel := context.WithTimeout(t.Context(), time.Second) // the 429 arrives first, even under load
	defer cancel()
	start := time.Now()
	_, err := c.Chat(ctx, userRequest("hi"), nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "rate limited")
	assert.Less(t, time.Since(start), 5*time.Second)
}

func TestChatBudget(t *testing.T) {
	t.Run("task budget spent mid-task", func(t *testing.T) {
		f := llmtest.NewServer(t, llmtest.Text("a", 60), llmtest.Text("b", 60), llmtest.Text("never sent", 60))
		c, _ := newTestClient(t, f, nil)
		b := NewBudget(100, nil)
		var err error
		calls := 0
		for ; calls < 5; calls++ {
			if _, err = c.Chat(t.Context(), userRequest("hi"), b); err != nil {
				break
			}
		}
		require.ErrorIs(t, err, ErrBudget)
		assert.Equal(t, 2, calls)
		assert.Contains(t, err.Error(), "task budget of 100 tokens spent (120 used)")
		assert.Len(t, f.Requests(), 2, "the refused call never reached the server")
		assert.LessOrEqual(t, b.Spent(), 100+60, "spend never exceeds budget plus one call")
	})
	t.Run("global budget shared by tasks", func(t *testing.T) {
		f := llmtest.NewServer(t, llmtest.Text("a", 50), llmtest.Text("b", 50))
		c, _ := newTestClient(t, f, nil)
		global := NewBudget(80, nil)
		task1, task2 := NewBudget(1000, global), NewBudget(1000, global)
		_, err := c.Chat(t.Context(), userRequest("hi"), task1)
		require.NoError(t, err)
		_, err = c.Chat(t.Context(), userRequest("hi"), task2)
		require.NoError(t, err)
		_, err = c.Chat(t.Context(), userRequest("hi"), task1)
		require.ErrorIs(t, err, ErrBudget)
		assert.Contains(t, err.Error(), "global budget of 80 tokens spent (100 used)")
		assert.Equal(t, 50, task1.Spent())
		assert.Equal(t, 100, global.Spent())
	})
}

func TestBudget(t *testing.T) {
	var unlimited *Budget
	require.NoError(t, unlimited.Check(1<<30))
	unlimited.Add(Usage{Total: 5})
	assert.Zero(t, unlimited.Spent())
	require.NoError(t, (&Budget{}).Check(1<<30), "the zero Budget is unlimited")

	b := NewBudget(100, nil)
	require.NoError(t, b.Check(100))
	require.ErrorIs(t, b.Check(101), ErrBudget, "an estimate over the limit is refused")
	b.Add(Usage{Prompt: 60, Completion: 39})
	assert.Equal(t, 99, b.Spent(), "Prompt+Completion counts when Total is missing")
	require.NoError(t, b.Check(0))
	b.Add(Usage{Total: 1})
	require.ErrorIs(t, b.Check(0), ErrBudget, "at the limit the next call is refused")

	parent := NewBudget(0, nil)
	child := NewBudget(0, parent)
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() { child.Add(Usage{Total: 2}) })
	}
	wg.Wait()
	assert.Equal(t, 100, child.Spent())
	assert.Equal(t, 100, parent.Spent())
}

// TestBudgetRestore: spend restored from a checkpoint counts against the
// task's limit but not against the run's global budget.
func TestBudgetRestore(t *testing.T) {
	var unlimited *Budget
	unlimited.Restore(Usage{Total: 5})
	assert.Zero(t, unlimited.Spent())

	global := NewBudget(1000, nil)
	task := NewBudget(100, global)
	task.Restore(Usage{Total: 90})
	task.Restore(Usage{Total: -3})
	assert.Equal(t, 90, task.Spent())
	assert.Zero(t, global.Spent(), "restored spend is not charged to the global budget")
	require.NoError(t, task.Check(10))
	require.ErrorIs(t, task.Check(11), ErrBudget, "restored spend counts against the task's limit")
	task.Add(Usage{Total: 10})
	assert.Equal(t, 100, task.Spent())
	assert.Equal(t, 10, global.Spent())
}

// logRecorder is a Config.Logf that keeps the lines.
type logRecorder struct {
	mu  sync.Mutex // guards buf
	buf []string
}

func (l *logRecorder) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, fmt.Sprintf(format, args...))
}

func (l *logRecorder) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.buf...)
}

func TestAPIKeyNeverLeaks(t *testing.T) {
	echo502 := llmtest.Reply{Status: http.StatusBadGateway, Body: "proxy error: upstream rejected Authorization: Bearer " + testKey}
	echo401 := llmtest.Error(http.StatusUnauthorized, "Incorrect API key provided: "+testKey+".", "invalid_api_key")
	f := llmtest.NewServer(t, echo502, echo401)
	logs := &logRecorder{}
	c, _ := newTestClient(t, f, func(cfg *Config) { cfg.Logf = logs.logf })
	_, err := c.Chat(t.Context(), userRequest("hi"), nil)
	require.ErrorIs(t, err, ErrAuth)

	require.NotEmpty(t, logs.lines(), "the 502 was logged before the retry")
	assert.Contains(t, strings.Join(logs.lines(), "\n"), "[REDACTED]", "the echoed key was there and was scrubbed")
	assert.Contains(t, err.Error(), "[REDACTED]")
	assert.NotContains(t, err.Error(), testKey)
	assert.NotContains(t, fmt.Sprintf("%+v %#v", err, errors.Unwrap(err)), testKey)
	for _, l := range logs.lines() {
		assert.NotContains(t, l, testKey)
	}
	for _, b := range f.RawBodies() {
		assert.NotContains(t, b, testKey)
	}
	assert.Equal(t, []string{"Bearer " + testKey, "Bearer " + testKey}, f.AuthHeaders(), "the key goes only in the Authorization header")
}
