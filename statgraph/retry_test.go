package statgraph_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// flaky fails its first `failures` attempts, recording when each attempt
// started and which attempt number its ctx reported.
type flaky struct {
	failures int
	starts   []time.Time
	attempts []int
	err      error
}

func (f *flaky) node(ctx context.Context, s st) (st, error) {
	f.starts = append(f.starts, time.Now())
	f.attempts = append(f.attempts, statgraph.RuntimeOf(ctx).Attempt)
	if len(f.starts) <= f.failures {
		if f.err != nil {
			return s, f.err
		}
		return s, errors.New("transient")
	}
	s.N++
	return s, nil
}

func oneNode(fn func(context.Context, st) (st, error), opts ...statgraph.NodeOption) *statgraph.Builder[st] {
	return statgraph.New[st]().AddNode("n", fn, opts...).AddEdge(statgraph.Start, "n").AddEdge("n", statgraph.End)
}

func gaps(ts []time.Time) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(ts); i++ {
		out = append(out, ts[i].Sub(ts[i-1]))
	}
	return out
}

func TestRetryDefaultsBackOffExponentially(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &flaky{failures: 2}
		g := mustCompile(t, oneNode(f.node, statgraph.WithRetry(statgraph.RetryPolicy{})))
		out, err := g.Invoke(context.Background(), st{})
		require.NoError(t, err)
		require.Equal(t, 1, out.N)
		require.Equal(t, []int{1, 2, 3}, f.attempts)
		require.Equal(t, []time.Duration{500 * time.Millisecond, time.Second}, gaps(f.starts))
	})
}

func TestRetryGivesUpAfterMaxAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &flaky{failures: 10}
		g := mustCompile(t, oneNode(f.node, statgraph.WithRetry(statgraph.RetryPolicy{
			MaxAttempts: 4, InitialInterval: time.Second, BackoffFactor: 3, MaxInterval: 5 * time.Second,
		})))
		_, err := g.Invoke(context.Background(), st{})
		var ne *statgraph.NodeError
		require.ErrorAs(t, err, &ne)
		require.Equal(t, 4, ne.Attempt)
		require.Equal(t, []time.Duration{time.Second, 3 * time.Second, 5 * time.Second}, gaps(f.starts))
	})
}

func TestRetryJitterStaysWithinBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &flaky{failures: 200}
		p := statgraph.RetryPolicy{MaxAttempts: 100, InitialInterval: time.Second, BackoffFactor: 1, Jitter: 0.25}
		g := mustCompile(t, oneNode(f.node, statgraph.WithRetry(p)))
		_, err := g.Invoke(context.Background(), st{})
		require.Error(t, err)
		distinct := map[time.Duration]bool{}
		for _, d := range gaps(f.starts) {
			require.GreaterOrEqual(t, d, 750*time.Millisecond)
			require.LessOrEqual(t, d, 1250*time.Millisecond)
			distinct[d] = true
		}
		require.Greater(t, len(distinct), 10, "jitter should vary the delays")
	})
}

func TestPermanentErrorIsNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cause := errors.New("bad request")
		f := &flaky{failures: 5, err: statgraph.Permanent(cause)}
		g := mustCompile(t, oneNode(f.node, statgraph.WithRetry(statgraph.RetryPolicy{MaxAttempts: 5})))
		_, err := g.Invoke(context.Background(), st{})
		require.ErrorIs(t, err, cause)
		require.Len(t, f.starts, 1)
		require.Nil(t, statgraph.Permanent(nil))
	})
}

func TestRetryOnFiltersErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &flaky{failures: 5, err: errors.New("fatal: no")}
		p := statgraph.RetryPolicy{MaxAttempts: 5, RetryOn: func(err error) bool { return err.Error() != "fatal: no" }}
		g := mustCompile(t, oneNode(f.node, statgraph.WithRetry(p)))
		_, err := g.Invoke(context.Background(), st{})
		require.Error(t, err)
		require.Len(t, f.starts, 1)
	})
}

func TestCancelledRunIsNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		g := mustCompile(t, oneNode(func(ctx context.Context, s st) (st, error) {
			calls++
			cancel()
			return s, ctx.Err()
		}, statgraph.WithRetry(statgraph.RetryPolicy{MaxAttempts: 5})))
		_, err := g.Invoke(ctx, st{})
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, 1, calls)
	})
}

func TestCancelDuringRetryWaitStopsPromptly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		f := &flaky{failures: 5}
		g := mustCompile(t, oneNode(f.node, statgraph.WithRetry(statgraph.RetryPolicy{MaxAttempts: 5, InitialInterval: time.Hour})))
		go func() { time.Sleep(time.Minute); cancel() }()
		t0 := time.Now()
		_, err := g.Invoke(ctx, st{})
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorContains(t, err, "stopped while waiting to retry")
		require.Equal(t, time.Minute, time.Since(t0))
	})
}

func TestNodeTimeoutFailsTheAttemptAndIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		g := mustCompile(t, oneNode(func(ctx context.Context, s st) (st, error) {
			calls++
			if calls == 1 {
				<-ctx.Done()
				return s, ctx.Err()
			}
			s.N = 7
			return s, nil
		}, statgraph.WithTimeout(2*time.Second), statgraph.WithRetry(statgraph.RetryPolicy{MaxAttempts: 2})))
		t0 := time.Now()
		out, err := g.Invoke(context.Background(), st{})
		require.NoError(t, err)
		require.Equal(t, 7, out.N)
		require.Equal(t, 2*time.Second+500*time.Millisecond, time.Since(t0))
	})
}

func TestNodeTimeoutWithoutRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := mustCompile(t, oneNode(func(ctx context.Context, s st) (st, error) {
			<-ctx.Done()
			return s, ctx.Err()
		}, statgraph.WithTimeout(time.Second)))
		_, err := g.Invoke(context.Background(), st{})
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.ErrorContains(t, err, `node "n" attempt 1`)
	})
}

func TestRetryPolicyDelayCaps(t *testing.T) {
	p := statgraph.RetryPolicy{}
	require.Equal(t, 500*time.Millisecond, statgraph.RetryDelay(&p, 1))
	require.Equal(t, 2*time.Second, statgraph.RetryDelay(&p, 3))
	require.Equal(t, 128*time.Second, statgraph.RetryDelay(&p, 50))
	require.Equal(t, 128*time.Second, statgraph.RetryDelay(&p, 5000))
}

// Mirrors LangGraph's test_retry.py test_graph_with_multiple_retry_policies:
// WithRetry given twice keeps both policies, and an error is retried under
// the first whose RetryOn accepts it (here each error kind under its own
// MaxAttempts; an error neither accepts is not retried). It kept only the
// last policy.
func TestSeveralRetryPoliciesMatchedByError(t *testing.T) {
	errValue, errKey, errOther := errors.New("value error"), errors.New("key error"), errors.New("other")
	is := func(target error) func(error) bool { return func(err error) bool { return errors.Is(err, target) } }
	for _, tc := range []struct {
		fail     error
		failures int // attempts that fail before one succeeds
		want     int // attempts made
		ok       bool
	}{
		{errValue, 1, 2, true},
		{errKey, 2, 3, true},
		{errValue, 2, 2, false}, // the value policy allows 2 attempts
		{errOther, 1, 1, false},
	} {
		attempts := 0
		b := statgraph.New[st]().
			AddNode("failing_node", func(context.Context, st) (st, error) {
				attempts++
				if attempts <= tc.failures {
					return st{}, tc.fail
				}
				return st{Log: []string{"recovered"}}, nil
			},
				statgraph.WithRetry(statgraph.RetryPolicy{MaxAttempts: 2, InitialInterval: time.Microsecond, RetryOn: is(errValue)}),
				statgraph.WithRetry(statgraph.RetryPolicy{MaxAttempts: 3, InitialInterval: time.Microsecond, RetryOn: is(errKey)})).
			AddEdge(statgraph.Start, "failing_node").AddEdge("failing_node", statgraph.End)
		_, err := mustCompile(t, b).Invoke(context.Background(), st{})
		if (err == nil) != tc.ok || attempts != tc.want {
			t.Errorf("%v failing %d times: %d attempts, error %v; want %d attempts, success %v", tc.fail, tc.failures, attempts, err, tc.want, tc.ok)
		}
	}
}
