// Package clock holds the module's one context-aware sleep, used by the
// graph library's retries, the gate's retries and the model client.
package clock

import (
	"context"
	"time"
)

// Sleep waits d or until ctx is done, whichever comes first, and then
// returns ctx.Err() (nil when the wait ended first). With d <= 0 it returns
// ctx.Err() at once. It is the one sleep of the module's retry loops.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
