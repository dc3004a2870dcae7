package statgraph_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// TestBackoffDelay: the one formula, with the growth factor a RetryPolicy
// sets, a cap, and no overflow however many retries; the fields alone choose
// no pause (zero Initial), a fixed pause (Factor at most 1) or an
// exponential one.
func TestBackoffDelay(t *testing.T) {
	require.Zero(t, statgraph.Backoff{Factor: 2, Max: time.Second}.Delay(3), "zero Initial: no pause")
	for _, f := range []float64{0, 0.5, 1} {
		fixed := statgraph.Backoff{Initial: time.Second, Factor: f}
		require.Equal(t, []time.Duration{time.Second, time.Second, time.Second},
			[]time.Duration{fixed.Delay(1), fixed.Delay(2), fixed.Delay(30)}, "Factor %v: fixed", f)
	}
	lin := statgraph.Backoff{Initial: time.Second, Step: 500 * time.Millisecond, Max: 2 * time.Second}
	require.Equal(t, []time.Duration{time.Second, 1500 * time.Millisecond, 2 * time.Second, 2 * time.Second},
		[]time.Duration{lin.Delay(1), lin.Delay(2), lin.Delay(3), lin.Delay(9)}, "Step: linear, capped")
	b := statgraph.Backoff{Initial: 100 * time.Millisecond, Factor: 3}
	require.Equal(t, []time.Duration{100 * time.Millisecond, 300 * time.Millisecond, 900 * time.Millisecond},
		[]time.Duration{b.Delay(1), b.Delay(2), b.Delay(3)})
	require.Equal(t, time.Duration(math.MaxInt64), b.Delay(1000), "uncapped, huge k")
	b.Max = time.Second
	require.Equal(t, time.Second, b.Delay(1000))
	require.Zero(t, b.Delay(0))
	b.Jitter = 1
	for range 100 {
		d := b.Delay(1)
		require.True(t, d >= 0 && d < 200*time.Millisecond, "%v outside [0, 2×100ms)", d)
	}
	p := statgraph.RetryPolicy{InitialInterval: time.Second, BackoffFactor: 1.5}
	require.Equal(t, 2250*time.Millisecond, statgraph.RetryDelay(&p, 3))
	require.Equal(t, time.Second, statgraph.RetryDelay(&statgraph.RetryPolicy{}, 2), "RetryPolicy's defaults: 0.5s doubling")
}
