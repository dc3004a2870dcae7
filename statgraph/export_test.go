package statgraph

import "time"

// RetryDelay exposes RetryPolicy's pause before jitter to the package's
// external tests.
func RetryDelay(p *RetryPolicy, attempt int) time.Duration { return p.delay(attempt) }
