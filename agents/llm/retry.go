package llm

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/statgraph/statgraph/statgraph"
)

// failure is one failed attempt, classified.
type failure struct {
	err        *APIError     // what the caller sees if no retry follows
	retryable  bool          // 408, 409, 429 (not quota), 5xx, timeouts, connection errors
	retryAfter time.Duration // the server's requested wait; 0 = none given
	limit      bool          // a 429 (not quota): with retryAfter, a limit to park on
}

// maxMessage caps the server's message kept in an APIError.
const maxMessage = 500

// classify turns a go-openai error into a failure. ok is false for errors that
// did not come from the server or the network (request validation, decoding
// a 200 response): those are returned as they are and never retried.
func (c *Client) classify(err error, rec *responseRecord, timedOut bool, model string, now time.Time) (f failure, ok bool) {
	var (
		apiErr *openai.APIError
		reqErr *openai.RequestError
		urlErr *url.Error
		netErr net.Error
	)
	status, code, msg := 0, "", ""
	switch {
	case errors.As(err, &apiErr):
		status, msg = apiErr.HTTPStatusCode, apiErr.Message
		if apiErr.Code != nil {
			code = fmt.Sprint(apiErr.Code)
		}
	case errors.As(err, &reqErr):
		status, msg = reqErr.HTTPStatusCode, strings.TrimSpace(string(reqErr.Body))
		if msg == "" {
			msg = reqErr.HTTPStatus
		}
	case timedOut:
		return failure{retryable: true, err: &APIError{Kind: KindTimeout, Message: "no answer",
			Hint: fmt.Sprintf("no answer within %s: raise the timeout or check the server at %s", c.cfg.Timeout, c.baseURL)}}, true
	case errors.As(err, &urlErr), errors.As(err, &netErr):
		kind := KindConnection
		if netErr != nil && netErr.Timeout() || urlErr != nil && urlErr.Timeout() {
			kind = KindTimeout
		}
		return failure{retryable: true, err: &APIError{Kind: kind, Message: c.scrub(err.Error()),
			Hint: fmt.Sprintf("could not reach %s: check OPENAI_BASE_URL and that the server is running", c.baseURL)}}, true
	default:
		return failure{}, false
	}
	msg = c.scrub(msg)
	if len(msg) > maxMessage {
		msg = msg[:maxMessage] + "…"
	}
	e := &APIError{Status: status, Message: msg}
	f = failure{err: e}
	if rec != nil {
		f.retryAfter = retryAfter(rec.header, now)
		if status == http.StatusTooManyRequests {
			f.retryAfter = rateLimitReset(rec.header, now)
		}
	}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Kind = KindAuth
		e.Hint = "check OPENAI_API_KEY (and OPENAI_BASE_URL if the server is not OpenAI)"
	case status == http.StatusNotFound:
		e.Kind = KindNotFound
		e.Hint = fmt.Sprintf("model %q not found at %s: set --model, STATGRAPH_MODEL or the task's model to one the server serves, or fix OPENAI_BASE_URL", model, c.baseURL)
	case status >= 400 && status < 500 && isContextLength(code, msg):
		e.Kind = KindContextLength
		e.Hint = "prompt too long: lower the executor's max turns or tool output size, shorten the task details or feedback, or use a model with a larger context"
	case (status == http.StatusTooManyRequests || status == http.StatusPaymentRequired) && IsBilling(code, msg):
		e.Kind = KindQuota
		e.Hint = "the account's quota is exhausted and no reset will come: add credit or raise its limit in the provider's billing settings, or use another OPENAI_API_KEY, then run statgraph resume"
	case status == http.StatusTooManyRequests:
		e.Kind, f.retryable, f.limit = KindRateLimited, true, true
		e.Hint = "the server kept rate limiting: wait, run fewer tasks in parallel (-j), or raise the account's rate limit"
	case status == http.StatusRequestTimeout:
		e.Kind, f.retryable = KindTimeout, true
		e.Hint = fmt.Sprintf("the server at %s timed out: try again later", c.baseURL)
	case status == http.StatusConflict || status >= 500:
		e.Kind, f.retryable = KindServer, true
		e.Hint = fmt.Sprintf("the server at %s kept failing: check that it is healthy or try again later", c.baseURL)
	default:
		e.Kind = KindBadRequest
		e.Hint = fmt.Sprintf("the server refused the request: check that model %q supports tool calls (and JSON mode, if enabled) and that OPENAI_BASE_URL is right", model)
	}
	return f, true
}

// isContextLength reports whether a 4xx error says the prompt is too long,
// going by OpenAI's error code and the wording of OpenAI, vLLM, Ollama and
// LM Studio.
func isContextLength(code, msg string) bool {
	if code == "context_length_exceeded" || code == "string_above_max_length" {
		return true
	}
	m := strings.ToLower(msg)
	for _, s := range []string{"context length", "context_length", "context window", "maximum context", "too many tokens", "prompt is too long", "reduce the length"} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// retryAfter returns the wait a response asks for: retry-after-ms (OpenAI's
// millisecond header) first, then Retry-After as seconds or an HTTP date
// relative to now. It returns 0 when neither is present or parses.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// backoff returns the wait before retry number n (1-based): the server's
// retryAfter if it gave one, otherwise full jitter, a uniform random duration
// in [0, initial*2^(n-1)] (statgraph's exponential Backoff without jitter).
// Either way the result is capped at maxWait.
func backoff(n int, initial, maxWait, serverAsked time.Duration) time.Duration {
	if serverAsked > 0 {
		return min(serverAsked, maxWait)
	}
	ceiling := statgraph.Backoff{Initial: initial, Factor: 2, Max: maxWait}.Delay(n)
	return rand.N(ceiling + 1)
}
