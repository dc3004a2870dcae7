package llmtest

import (
	"context"
	"sync"
	"time"
)

// SleepRecorder stands in for a real sleep between retries, such as the
// llm.Config Sleep hook. The zero SleepRecorder is ready to use; it is safe
// for concurrent use.
type SleepRecorder struct {
	mu    sync.Mutex // guards waits
	waits []time.Duration
}

// Sleep records d and returns at once, with ctx's error if ctx is already
// done and nil otherwise.
func (s *SleepRecorder) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

// Waits returns the durations Sleep was asked for so far, in order; nil if
// none.
func (s *SleepRecorder) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}
