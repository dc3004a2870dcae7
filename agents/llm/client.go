package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/statgraph/statgraph/internal/clock"
	"github.com/statgraph/statgraph/internal/obs"
	"github.com/statgraph/statgraph/internal/secret"
)

// Config configures a [Client]. The zero value of every field except Model
// has a documented default.
type Config struct {
	// APIKey is sent as a bearer token. Empty sends none, which local servers
	// such as Ollama accept. [New] adds it to the process-wide set of
	// secrets (package internal/secret), so neither it nor its encodings
	// appear in errors, logs, prompts or anything else statgraph writes.
	APIKey string
	// BaseURL is the OpenAI-compatible endpoint, e.g. http://localhost:11434/v1.
	// Empty means https://api.openai.com/v1.
	BaseURL string
	// Model is the model name. Required.
	Model string
	// JSONMode asks the planner's calls for response_format json_object.
	// False (the default) relies on the prompt alone, which also works with
	// servers that ignore or reject response_format.
	JSONMode bool
	// Timeout bounds each HTTP request (each attempt): a server that has
	// not answered within it is given up on, and the attempt is retried
	// like any other timeout. 0 means 2 minutes. The CLI's
	// --request-timeout and tasks.json's request_timeout set it.
	Timeout time.Duration
	// MaxResponseBytes caps the body of one HTTP response. A larger body is
	// not read past the cap: the call fails at once, without retries, with
	// an error matching [ErrResponseTooLarge], so a hostile or broken
	// server cannot make the process buffer an unbounded reply. 0 means
	// [DefaultMaxResponseBytes]; tasks.json's limits.response_bytes and
	// the CLI's --max-response-bytes set it.
	MaxResponseBytes int64
	// MaxRetries is how many times a failed request is retried after the
	// first attempt. 0 means 5; negative means no retries.
	MaxRetries int
	// InitialBackoff and MaxBackoff shape the exponential backoff with full
	// jitter; MaxBackoff also caps a server's Retry-After. 0 means 1s and 30s.
	InitialBackoff, MaxBackoff time.Duration
	// ParkAfter: an HTTP 429 whose reset (Retry-After, retry-after-ms or
	// x-ratelimit-reset-*) is further away than ParkAfter is not waited for
	// inside the call: Chat returns a *[LimitError] at once, so the caller
	// can park the task and free its slot. A 429 with a reset that persists
	// through every retry returns one too. 0 means MaxBackoff; the CLI's
	// --park-after sets it.
	ParkAfter time.Duration
	// HTTPClient sends the requests. nil means a new http.Client with the
	// default transport. The client is copied, never modified.
	HTTPClient *http.Client
	// Sleep waits between retries; tests inject a fake. nil means
	// clock.Sleep, a timer that returns ctx.Err() when ctx is done first.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logf receives one line per retry, with the API key removed. nil means
	// silent.
	Logf func(format string, args ...any)
	// Prices prices each call's tokens (Usage.CostUSD); nil means
	// DefaultPrices. A model with no price there has its tokens counted as
	// Usage.Unpriced.
	Prices Prices
}

// ConfigFromEnv returns a Config with APIKey from OPENAI_API_KEY, BaseURL
// from OPENAI_BASE_URL and Model from STATGRAPH_MODEL; other fields are
// zero. The values are read through secret.Lookup, so variables that
// statgraph moved out of its environment at start-up are found.
func ConfigFromEnv() Config {
	key, _ := secret.Lookup("OPENAI_API_KEY")
	base, _ := secret.Lookup("OPENAI_BASE_URL")
	model, _ := secret.Lookup("STATGRAPH_MODEL")
	return Config{APIKey: key, BaseURL: base, Model: model}
}

// Client calls an OpenAI-compatible chat-completions endpoint with retries,
// typed errors and token budgets. A Client is immutable and safe for
// concurrent use.
type Client struct {
	api     *openai.Client
	cfg     Config // defaults filled in
	baseURL string
}

// New returns a Client for cfg, or [ErrNoModel] if cfg.Model is empty. It
// adds cfg.APIKey to the process-wide secrets that every scrub removes.
func New(cfg Config) (*Client, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, ErrNoModel
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Minute
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = 5
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.InitialBackoff <= 0 {
		cfg.InitialBackoff = time.Second
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 30 * time.Second
	}
	if cfg.ParkAfter <= 0 {
		cfg.ParkAfter = cfg.MaxBackoff
	}
	if cfg.Sleep == nil {
		cfg.Sleep = clock.Sleep
	}
	if cfg.Prices == nil {
		cfg.Prices = defaultPrices
	}
	secret.Add(cfg.APIKey)
	hc := http.Client{}
	if cfg.HTTPClient != nil {
		hc = *cfg.HTTPClient
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	hc.Transport = &recordingTransport{base: hc.Transport, limit: cfg.MaxResponseBytes}
	oc := openai.DefaultConfig(cfg.APIKey)
	if cfg.BaseURL != "" {
		oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	}
	oc.HTTPClient = &hc
	return &Client{api: openai.NewClientWithConfig(oc), cfg: cfg, baseURL: oc.BaseURL}, nil
}

// Model returns the model name requests use when they name none.
func (c *Client) Model() string { return c.cfg.Model }

// UsageOf returns the token usage a response reports, cached input tokens
// (prompt_tokens_details.cached_tokens) included; it has no cost.
func UsageOf(resp openai.ChatCompletionResponse) Usage {
	u := Usage{
		Prompt:     resp.Usage.PromptTokens,
		Completion: resp.Usage.CompletionTokens,
		Total:      resp.Usage.TotalTokens,
	}
	if d := resp.Usage.PromptTokensDetails; d != nil {
		u.Cached = d.CachedTokens
	}
	return u
}

// usageOf returns the usage resp reports, priced at the requested model's
// price ("": the Client's model), else at the price of the model that
// answered, else unpriced.
func (c *Client) usageOf(model string, resp openai.ChatCompletionResponse) Usage {
	if model == "" {
		model = c.cfg.Model
	}
	u := UsageOf(resp)
	if _, ok := c.cfg.Prices.Price(model); !ok && resp.Model != "" {
		if _, ok := c.cfg.Prices.Price(resp.Model); ok {
			model = resp.Model
		}
	}
	return c.cfg.Prices.Priced(model, u)
}

// Chat sends req (with the Client's model if req.Model is empty) and returns
// the response, charging its usage, priced with Config.Prices, to budget
// (nil: unlimited). A usage that cannot be real (Usage.Check) is not
// charged; the budget keeps a warning (Budget.TakeWarnings).
//
// The call is refused with an error matching [ErrBudget] if budget is spent
// (checked with estimate 0). A 429 or 402 saying the quota or credit is
// exhausted returns an error matching [ErrQuota] at once; a 429 whose reset
// is further away than ParkAfter, or that lasts through every retry with a
// reset time, returns a *[LimitError] (see Config.ParkAfter). HTTP 408,
// 409, other 429s, 5xx, timeouts and connection errors are retried up to
// MaxRetries times, waiting as the server's retry-after-ms or Retry-After
// header asks or with exponential backoff and full jitter, capped at
// MaxBackoff. Other failures, and the last retryable one, return an
// *[APIError]. If ctx ends first, the error wraps ctx.Err(). The API key is
// removed from the messages before sending, and no error text holds it.
func (c *Client) Chat(ctx context.Context, req openai.ChatCompletionRequest, budget *Budget) (resp openai.ChatCompletionResponse, err error) {
	if req.Model == "" {
		req.Model = c.cfg.Model
	}
	ctx, end := c.startCall(ctx, req.Model)
	attempts := 0
	if end != nil {
		defer func() {
			if err != nil {
				end(err, obs.Int("statgraph.llm.attempts", attempts))
			} else {
				end(nil, callAttrs(resp, c.usageOf(req.Model, resp), attempts)...)
			}
		}()
	}
	req.Messages = c.scrubMessages(req.Messages)
	if err := budget.Check(0); err != nil {
		return openai.ChatCompletionResponse{}, err
	}
	limit := c.cfg.MaxRetries + 1
	for attempt := 1; ; attempt++ {
		attempts = attempt
		resp, f, err := c.send(ctx, req)
		if err != nil {
			return openai.ChatCompletionResponse{}, err
		}
		if f == nil {
			budget.Add(c.usageOf(req.Model, resp))
			return resp, nil
		}
		f.err.Attempts = attempt
		if f.limit && f.retryAfter > 0 && (f.retryAfter > c.cfg.ParkAfter || attempt >= limit) {
			return openai.ChatCompletionResponse{}, &LimitError{Until: time.Now().Add(f.retryAfter), Reason: f.err.Message}
		}
		if !f.retryable || attempt >= limit {
			return openai.ChatCompletionResponse{}, f.err
		}
		wait := backoff(attempt, c.cfg.InitialBackoff, c.cfg.MaxBackoff, f.retryAfter)
		c.logf("llm: model %s: attempt %d of %d failed: %v; retrying in %s", req.Model, attempt, limit, f.err, wait)
		if err := c.cfg.Sleep(ctx, wait); err != nil {
			return openai.ChatCompletionResponse{}, fmt.Errorf("llm: model %s: stopped waiting to retry after %v: %w", req.Model, f.err, err)
		}
	}
}

// send makes one attempt. It returns a failure for a server or network error
// worth classifying, or err for everything else (ctx done, invalid request).
func (c *Client) send(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, *failure, error) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	rec := &responseRecord{}
	resp, err := c.api.CreateChatCompletion(context.WithValue(actx, recordKey{}, rec), req)
	if err == nil {
		return resp, nil, nil
	}
	if ctx.Err() != nil {
		return resp, nil, fmt.Errorf("llm: model %s: %w", req.Model, ctx.Err())
	}
	if errors.Is(err, errBodyCapped) {
		return resp, nil, fmt.Errorf("llm: model %s: %w", req.Model, &ResponseTooLargeError{Limit: c.cfg.MaxResponseBytes, URL: c.baseURL})
	}
	timedOut := errors.Is(actx.Err(), context.DeadlineExceeded)
	f, ok := c.classify(err, rec, timedOut, req.Model, time.Now())
	if !ok {
		return resp, nil, &redactedError{msg: c.scrub(fmt.Sprintf("llm: model %s: %v", req.Model, err))}
	}
	return resp, &f, nil
}

// scrubMessages returns msgs with every registered secret (the API key
// among them) and its encodings removed from every content and tool-call
// argument, so that no prompt carries them. It copies only if one occurs.
func (c *Client) scrubMessages(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	if !secret.Active() {
		return msgs
	}
	var out []openai.ChatCompletionMessage
	for i, m := range msgs {
		leaks := secret.Scrub(m.Content) != m.Content
		for _, tc := range m.ToolCalls {
			leaks = leaks || secret.Scrub(tc.Function.Arguments) != tc.Function.Arguments
		}
		if !leaks {
			continue
		}
		if out == nil {
			out = slices.Clone(msgs)
		}
		m.Content = secret.Scrub(m.Content)
		m.ToolCalls = slices.Clone(m.ToolCalls)
		for j := range m.ToolCalls {
			m.ToolCalls[j].Function.Arguments = secret.Scrub(m.ToolCalls[j].Function.Arguments)
		}
		out[i] = m
	}
	if out == nil {
		return msgs
	}
	return out
}

// scrub removes every registered secret, the API key among them, from s.
func (c *Client) scrub(s string) string { return secret.Scrub(s) }

// logf formats a line, removes the API key and passes it to Config.Logf.
func (c *Client) logf(format string, args ...any) {
	if c.cfg.Logf != nil {
		c.cfg.Logf("%s", c.scrub(fmt.Sprintf(format, args...)))
	}
}

// go-openai's error types do not carry response headers, so Retry-After
// cannot be read from the error. Instead New wraps the HTTP transport in a
// recordingTransport, and each attempt puts a fresh responseRecord in its
// request context; the transport stores the last response's headers there. The record belongs to one attempt, so concurrent calls
// never see each other's headers.

type recordKey struct{}

// responseRecord holds the headers of the last response of one attempt. It
// is written by RoundTrip before http.Client.Do returns and read after, on
// the same goroutine, so it needs no lock.
type responseRecord struct {
	header http.Header
}

// recordingTransport stores each response's status and headers in the
// request context's responseRecord, if any, and caps each response body at
// limit bytes (see cappedBody).
type recordingTransport struct {
	base  http.RoundTripper // nil = http.DefaultTransport
	limit int64             // > 0
}

// RoundTrip implements http.RoundTripper.
func (t *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if rec, ok := req.Context().Value(recordKey{}).(*responseRecord); ok && resp != nil {
		rec.header = resp.Header.Clone()
	}
	if resp != nil && resp.Body != nil {
		resp.Body = &cappedBody{ReadCloser: resp.Body, left: t.limit}
	}
	return resp, err
}

// errBodyCapped is what a cappedBody's Read returns once the body passes its
// cap; send turns it into a *ResponseTooLargeError. go-openai returns the
// reader's error as it is (or wrapped with %w), so errors.Is finds it.
var errBodyCapped = errors.New("llm: response body over the cap")

// cappedBody reads at most left bytes of a response body and fails with
// errBodyCapped on the first byte past them, so nothing beyond the cap is
// ever buffered. It is read by one goroutine at a time, as http.Response
// bodies are.
type cappedBody struct {
	io.ReadCloser
	left int64 // bytes still allowed
}

// Read implements io.Reader.
func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// Read one byte to tell a body of exactly the cap from a larger one.
		var one [1]byte
		n, err := b.ReadCloser.Read(one[:])
		if n > 0 {
			return 0, errBodyCapped
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
