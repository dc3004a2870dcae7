package statgraph

import (
	"context"
	"errors"
	"time"
)

// RetryPolicy says how a node is retried when it returns an error. Every
// field's zero value selects the documented default, so RetryPolicy{} retries
// up to 3 attempts in all, 0.5 s then 1 s apart.
type RetryPolicy struct {
	// InitialInterval is the delay before the second attempt. Zero means 500ms.
	InitialInterval time.Duration
	// BackoffFactor multiplies the delay after each attempt. Zero means 2;
	// a factor of at most 1 keeps the delay fixed (see Backoff).
	BackoffFactor float64
	// MaxInterval caps the delay. Zero means 128s.
	MaxInterval time.Duration
	// MaxAttempts is the number of attempts in all, the first included.
	// Zero means 3; 1 means no retry.
	MaxAttempts int
	// Jitter spreads each delay randomly by up to this fraction of it in
	// either direction (0.1 means ±10%). Zero means no jitter; values are
	// clamped to [0, 1].
	Jitter float64
	// RetryOn decides whether an error is retried. Nil means every error
	// except those marked Permanent.
	RetryOn func(error) bool
}

func (p *RetryPolicy) maxAttempts() int {
	if p.MaxAttempts <= 0 {
		return 3
	}
	return p.MaxAttempts
}

// delay returns the pause after the given failed attempt (1 for the first),
// before jitter.
func (p *RetryPolicy) delay(attempt int) time.Duration {
	b := p.backoff()
	b.Jitter = 0
	return b.Delay(attempt)
}

// backoff returns p's pauses as a Backoff, its defaults filled in.
func (p *RetryPolicy) backoff() Backoff {
	b := Backoff{Initial: p.InitialInterval, Factor: p.BackoffFactor, Max: p.MaxInterval, Jitter: p.Jitter}
	if b.Initial <= 0 {
		b.Initial = 500 * time.Millisecond
	}
	if b.Factor == 0 {
		b.Factor = 2
	}
	if b.Max <= 0 {
		b.Max = 128 * time.Second
	}
	return b
}

// retryable reports whether err, returned by an attempt while the run's
// context is still live, may be retried under p.
func (p *RetryPolicy) retryable(err error) bool {
	var perm *permanentError
	if errors.As(err, &perm) || errors.Is(err, context.Canceled) || errors.Is(err, ErrInterrupted) || isHandoff(err) {
		return false
	}
	if p.RetryOn != nil {
		return p.RetryOn(err)
	}
	return true
}

// policyFor returns the first of policies under which err may be retried,
// or nil.
func policyFor(policies []RetryPolicy, err error) *RetryPolicy {
	for i := range policies {
		if policies[i].retryable(err) {
			return &policies[i]
		}
	}
	return nil
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks err as not worth retrying: a node returning it fails at
// once whatever its RetryPolicy says. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}
