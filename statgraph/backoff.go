package statgraph

import (
	"math"
	"math/rand/v2"
	"time"
)

// Backoff is the pause before a retry: the one formula of the module, used
// by node retries (RetryPolicy), gates (package statgraph/gate) and the
// orchestrator's model client. Retry k (1 for the first) waits
// Initial × Factor^(k-1) + Step × (k-1), capped at Max, then spread by
// Jitter:
//
//	Backoff{}                                      no pause
//	Backoff{Initial: time.Second}                  1s before every retry
//	Backoff{Initial: time.Second, Step: time.Second}  1s, 2s, 3s, ... (linear)
//	Backoff{Initial: time.Second, Factor: 2}       1s, 2s, 4s, ...
//	Backoff{Initial: time.Second, Factor: 2, Max: 5 * time.Second}  1s, 2s, 4s, 5s, 5s, ...
//
// The zero value does not pause.
type Backoff struct {
	// Initial is the first pause. Zero means no pause at all.
	Initial time.Duration
	// Factor is how much the pause grows per retry: at most 1 (zero
	// included) keeps it fixed at Initial, above 1 makes it exponential.
	Factor float64
	// Step is added per retry after the first: with Factor at most 1 the
	// pause grows linearly (Initial, Initial+Step, Initial+2×Step, ...).
	// Zero adds nothing.
	Step time.Duration
	// Max caps a pause, before jitter. Zero means no cap.
	Max time.Duration
	// Jitter spreads each pause randomly by up to this fraction of it in
	// either direction: 0.1 means ±10%, and 1 spreads a pause d uniformly
	// over [0, 2d). Zero means none; values are clamped to [0, 1].
	Jitter float64
}

// Delay returns the pause before retry k (1 for the first), jitter
// included: 0 for a zero Initial or k < 1, and never more than the largest
// time.Duration however large k grows. It is safe for concurrent use.
func (b Backoff) Delay(k int) time.Duration {
	if b.Initial <= 0 || k < 1 {
		return 0
	}
	d := float64(b.Initial)
	if b.Factor > 1 {
		d *= math.Pow(b.Factor, float64(k-1))
	}
	if b.Step > 0 {
		d += float64(b.Step) * float64(k-1)
	}
	if b.Max > 0 && d > float64(b.Max) {
		d = float64(b.Max)
	}
	if j := min(max(b.Jitter, 0), 1); j > 0 {
		d *= 1 + j*(2*rand.Float64()-1)
	}
	if d >= math.MaxInt64 || math.IsNaN(d) {
		return math.MaxInt64
	}
	return time.Duration(d)
}
