package llm

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every error returned by [New], [Client.Chat], [Client.Plan] and
// [Client.Execute] that comes from the model server or the budget matches one
// of these with [errors.Is]; server errors are *[APIError] values, reachable
// with [errors.As], that carry the HTTP status and a hint saying what to change.
var (
	// ErrNoModel: no model name is configured; returned by New.
	ErrNoModel = errors.New(`llm: no model configured: pass --model, set STATGRAPH_MODEL, or give the task a "model" field`)
	// ErrAuth: the server rejected the API key (HTTP 401 or 403).
	ErrAuth = errors.New("llm: authentication failed")
	// ErrNotFound: the model or the endpoint does not exist (HTTP 404).
	ErrNotFound = errors.New("llm: model or endpoint not found")
	// ErrBadRequest: the server refused the request as malformed (HTTP 400,
	// 422 and other client errors that are not retried).
	ErrBadRequest = errors.New("llm: bad request")
	// ErrContextLength: the prompt does not fit the model's context window.
	ErrContextLength = errors.New("llm: prompt too long for the model's context")
	// ErrRateLimited: HTTP 429 persisted through every retry and the server
	// said nothing of when it would take requests again.
	ErrRateLimited = errors.New("llm: rate limited")
	// ErrLimit: a usage or rate limit lasts until a known time further away
	// than a call waits; the error is a *[LimitError] saying until when.
	ErrLimit = errors.New("llm: usage or rate limit reached")
	// ErrQuota: the account's quota or credit is exhausted (OpenAI's
	// insufficient_quota, a billing error, a credit balance too low): no
	// reset will come, so nothing should be retried until someone adds
	// credit.
	ErrQuota = errors.New("llm: quota or credit exhausted")
	// ErrServer: the server failed (HTTP 5xx), timed out or could not be
	// reached, through every retry.
	ErrServer = errors.New("llm: server failed or unreachable")
	// ErrBudget: a budget (tokens or dollars) is spent; the call was not
	// made. The error is a *[BudgetError].
	ErrBudget = errors.New("llm: budget exhausted")
	// ErrInvalidPlan: the model's plan was not valid JSON with the required
	// fields, even after one repair round.
	ErrInvalidPlan = errors.New("llm: invalid plan")
	// ErrResponseTooLarge: one response of the server was larger than
	// Config.MaxResponseBytes; the call was not retried. The error is a
	// *[ResponseTooLargeError].
	ErrResponseTooLarge = errors.New("llm: response too large")
	// ErrInvalidReview: the model's review was not the JSON asked for,
	// even after one repair round.
	ErrInvalidReview = errors.New("llm: invalid review")
	// ErrInvalidVerdict: the judge's answer was not the JSON asked for,
	// even after one repair round.
	ErrInvalidVerdict = errors.New("llm: invalid verdict")
)

// Kinds of [APIError]; each maps to one sentinel error.
const (
	KindAuth          = "auth"
	KindNotFound      = "not_found"
	KindBadRequest    = "bad_request"
	KindContextLength = "context_length"
	KindRateLimited   = "rate_limited"
	KindQuota         = "quota"
	KindServer        = "server"
	KindTimeout       = "timeout"
	KindConnection    = "connection"
)

// APIError is a failed chat-completion call, after any retries. Status is the
// HTTP status of the last attempt (0 for timeouts and connection errors),
// Kind one of the Kind constants, Message the server's own message (with the
// API key removed), Hint what to change, and Attempts how many requests were
// made. errors.Is matches it against the sentinel for its Kind: KindAuth ->
// ErrAuth, KindNotFound -> ErrNotFound, KindBadRequest -> ErrBadRequest,
// KindContextLength -> ErrContextLength, KindRateLimited -> ErrRateLimited,
// KindQuota -> ErrQuota, and KindServer, KindTimeout and KindConnection -> ErrServer.
type APIError struct {
	Status   int
	Kind     string
	Message  string
	Hint     string
	Attempts int
}

// Error reads "<sentinel text> (HTTP <status>, <n> attempts): <message>: <hint>".
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(e.sentinel().Error())
	var meta []string
	if e.Status != 0 {
		meta = append(meta, fmt.Sprintf("HTTP %d", e.Status))
	}
	if e.Attempts > 1 {
		meta = append(meta, fmt.Sprintf("%d attempts", e.Attempts))
	}
	if len(meta) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(meta, ", "))
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Hint != "" {
		b.WriteString(": ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Is reports whether target is the sentinel error for e's Kind.
func (e *APIError) Is(target error) bool {
	return target == e.sentinel()
}

func (e *APIError) sentinel() error {
	switch e.Kind {
	case KindAuth:
		return ErrAuth
	case KindNotFound:
		return ErrNotFound
	case KindContextLength:
		return ErrContextLength
	case KindRateLimited:
		return ErrRateLimited
	case KindQuota:
		return ErrQuota
	case KindServer, KindTimeout, KindConnection:
		return ErrServer
	default:
		return ErrBadRequest
	}
}

// redactedError is an error whose text had the API key removed. It keeps
// context errors reachable with errors.Is but hides the original error, whose
// text still holds the key.
type redactedError struct {
	msg   string
	cause error // context.Canceled, context.DeadlineExceeded or nil
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.cause }

// DefaultMaxResponseBytes is the cap on one response's body when
// Config.MaxResponseBytes is 0: 4 MiB, far above any genuine chat
// completion (a 128k-token context is about 0.5 MB of text).
const DefaultMaxResponseBytes = 4 << 20

// ResponseTooLargeError is a response body that passed
// Config.MaxResponseBytes. errors.Is matches it against [ErrResponseTooLarge].
type ResponseTooLargeError struct {
	Limit int64  // the cap, in bytes
	URL   string // the server's base URL
}

// Error says what was capped and how to raise the cap.
func (e *ResponseTooLargeError) Error() string {
	return fmt.Sprintf("response from %s is larger than the cap of %s on one response; the reply was dropped, not retried: "+
		"if the server's replies are genuine, raise the cap with --max-response-bytes or \"limits\": {\"response_bytes\": N} in tasks.json",
		e.URL, formatSize(e.Limit))
}

// Is reports whether target is ErrResponseTooLarge.
func (e *ResponseTooLargeError) Is(target error) bool { return target == ErrResponseTooLarge }
