package statgraph

import "time"

// RetryDelay exposes RetryPolicy's pause before jitter to the package's
// external tests.
func RetryDelay(p *RetryPolicy, attempt int) time.Duration { return p.delay(attempt) }

// MemoryStore is NewMemoryCheckpointer's store, for external tests that
// wrap it (count or fail its calls) and keep its value-keeping behaviour.
type MemoryStore = memoryCheckpointer

// NewMemoryStore returns an empty MemoryStore that encodes states when
// encode is set.
func NewMemoryStore(encode bool) *MemoryStore { return &memoryCheckpointer{encode: encode} }

// The unexported sentinels, for the package's external tests.
var (
	ErrUnknownRoute       = errUnknownRoute
	ErrConflictingUpdates = errConflictingUpdates
	ErrNotInterrupted     = errNotInterrupted
	ErrNoCheckpointer     = errNoCheckpointer
)
