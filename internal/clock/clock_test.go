package clock_test

import (
	"context"
	"testing"
	"time"

	"github.com/statgraph/statgraph/internal/clock"
	"github.com/stretchr/testify/require"
)

// TestSleep: Sleep waits, and returns ctx's error when ctx ends first.
func TestSleep(t *testing.T) {
	t0 := time.Now()
	require.NoError(t, clock.Sleep(context.Background(), 20*time.Millisecond))
	require.GreaterOrEqual(t, time.Since(t0), 20*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, clock.Sleep(ctx, time.Hour), context.Canceled)
	require.ErrorIs(t, clock.Sleep(ctx, 0), context.Canceled)
}
