package statgraph_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/statgraph/statgraph/statgraph"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// appendReducer merges st updates: N adds up, Log appends.
func appendReducer(cur, upd st) st {
	cur.N += upd.N
	cur.Log = statgraph.Append(cur.Log, upd.Log)
	return cur
}

func only(name string) func(context.Context, st) (st, error) {
	return func(context.Context, st) (st, error) { return st{N: 1, Log: []string{name}}, nil }
}

func TestRetryLoopMatchesNote002(t *testing.T) {
	g := mustCompile(t, w1())
	for _, n := range []int{1, 3, 50} {
		out, err := g.Invoke(context.Background(), w1State{MaxRetries: n})
		require.NoError(t, err)
		require.Equal(t, n, out.RetryCount)
		require.Len(t, out.ErrorHistory, n+1)
		require.Equal(t, "max retries exceeded", out.ErrorHistory[n])
	}
}

func TestJoinRunsOnceAfterAllBranchesOfAStep(t *testing.T) {
	var joins atomic.Int32
	g := mustCompile(t, statgraph.New[st]().SetReducer(appendReducer).
		AddNode("a", only("a")).AddNode("b", only("b")).AddNode("c", only("c")).
		AddNode("join", func(_ context.Context, s st) (st, error) {
			joins.Add(1)
			return st{Log: []string{fmt.Sprintf("join saw %d", len(s.Log))}}, nil
		}).
		AddEdge(statgraph.Start, "a").AddEdge(statgraph.Start, "b").AddEdge(statgraph.Start, "c").
		AddEdge("a", "join").AddEdge("b", "join").AddEdge("c", "join").AddEdge("join", statgraph.End))
	out, err := g.Invoke(context.Background(), st{})
	require.NoError(t, err)
	require.EqualValues(t, 1, joins.Load())
	require.Equal(t, []string{"a", "b", "c", "join saw 3"}, out.Log)
}

func TestParallelMergeOrderIsByNodeName(t *testing.T) {
	// Nodes finish in random order; the merge must still follow their names.
	b := statgraph.New[st]().SetReducer(appendReducer)
	names := []string{"v7", "v3", "v0", "v5", "v1", "v6", "v2", "v4"}
	for i, name := range names {
		b.AddNode(name, func(context.Context, st) (st, error) {
			time.Sleep(time.Duration((i*7)%5) * 100 * time.Microsecond)
			return st{Log: []string{name}}, nil
		}).AddEdge(statgraph.Start, name).AddEdge(name, statgraph.End)
	}
	g := mustCompile(t, b)
	want := slices.Sorted(slices.Values(names))
	for range 200 {
		out, err := g.Invoke(context.Background(), st{})
		require.NoError(t, err)
		require.Equal(t, want, out.Log)
	}
}

func TestParallelUpdatesWithoutReducerFailNamingBothNodes(t *testing.T) {
	g := mustCompile(t, statgraph.New[st]().
		AddNode("left", only("l")).AddNode("right", only("r")).
		AddEdge(statgraph.Start, "left").AddEdge(statgraph.Start, "right").
		AddEdge("left", statgraph.End).AddEdge("right", statgraph.End))
	_, err := g.Invoke(context.Background(), st{})
	require.ErrorIs(t, err, statgraph.ErrConflictingUpdates)
	require.ErrorContains(t, err, `"left" and "right"`)
}

func TestStepLimitNamesTheLoop(t *testing.T) {
	g := mustCompile(t, statgraph.New[st]().
		AddNode("ping", step("ping")).AddNode("pong", step("pong")).
		AddEdge(statgraph.Start, "ping").AddEdge("ping", "pong").
		AddConditionalEdges("pong", func(context.Context, st) string { return "again" },
			map[string]string{"again": "ping", "stop": statgraph.End}))
	out, err := g.Invoke(context.Background(), st{}, statgraph.WithStepLimit(7))
	require.ErrorIs(t, err, statgraph.ErrStepLimit)
	require.ErrorContains(t, err, "7 steps taken and pong still to run")
	require.Equal(t, 7, out.N)

	g2 := mustCompile(t, statgraph.New[st]().
		AddNode("ping", step("ping")).AddEdge(statgraph.Start, "ping").
		AddConditionalEdges("ping", func(context.Context, st) string { return "again" },
			map[string]string{"again": "ping", "stop": statgraph.End}))
	_, err = g2.Invoke(context.Background(), st{})
	require.ErrorContains(t, err, "10000 steps taken and ping still to run", "without WithStepLimit a run may take 10,000 steps")
}

func TestUnknownRouteKeyNamesNodeAndKey(t *testing.T) {
	g := mustCompile(t, statgraph.New[st]().AddNode("a", step("a")).AddEdge(statgraph.Start, "a").
		AddConditionalEdges("a", func(context.Context, st) string { return "sideways" },
			map[string]string{"done": statgraph.End, "again": "a"}))
	_, err := g.Invoke(context.Background(), st{})
	require.ErrorIs(t, err, statgraph.ErrUnknownRoute)
	require.ErrorContains(t, err, `node "a" routed to "sideways"; its path map has again, done`)
}

func TestCancellationStopsARunMidNode(t *testing.T) {
	started := make(chan struct{})
	g := mustCompile(t, statgraph.New[st]().
		AddNode("slow", func(ctx context.Context, s st) (st, error) {
			close(started)
			<-ctx.Done()
			return s, ctx.Err()
		}).AddNode("after", step("after")).
		AddEdge(statgraph.Start, "slow").AddEdge("slow", "after").AddEdge("after", statgraph.End))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	t0 := time.Now()
	out, err := g.Invoke(ctx, st{})
	require.ErrorIs(t, err, context.Canceled)
	require.Less(t, time.Since(t0), 5*time.Second)
	require.NotContains(t, out.Log, "after")
	var ne *statgraph.NodeError
	require.ErrorAs(t, err, &ne)
	require.Equal(t, "slow", ne.Node)
}

func TestCancelledContextStopsBetweenSteps(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	g := mustCompile(t, statgraph.New[st]().
		AddNode("a", func(_ context.Context, s st) (st, error) { cancel(); s.N++; return s, nil }).
		AddNode("b", step("b")).
		AddEdge(statgraph.Start, "a").AddEdge("a", "b").AddEdge("b", statgraph.End))
	out, err := g.Invoke(ctx, st{})
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "before step 2")
	require.Equal(t, 1, out.N)
}

func TestPanicBecomesNodeError(t *testing.T) {
	g := mustCompile(t, statgraph.New[st]().
		AddNode("boom", func(context.Context, st) (st, error) { panic("kaput") }).
		AddEdge(statgraph.Start, "boom").AddEdge("boom", statgraph.End))
	_, err := g.Invoke(context.Background(), st{})
	var ne *statgraph.NodeError
	require.ErrorAs(t, err, &ne)
	require.Equal(t, "boom", ne.Node)
	require.Equal(t, 1, ne.Attempt)
	require.Equal(t, "kaput", ne.Panic)
	require.Contains(t, string(ne.Stack), "run_test.go")
	require.ErrorContains(t, err, `node "boom" attempt 1 panicked: kaput`)
}

func TestPanicInParallelBranchDoesNotCrash(t *testing.T) {
	g := mustCompile(t, statgraph.New[st]().SetReducer(appendReducer).
		AddNode("ok", only("ok")).
		AddNode("boom", func(context.Context, st) (st, error) { panic(errors.New("bad")) }).
		AddEdge(statgraph.Start, "ok").AddEdge(statgraph.Start, "boom").
		AddEdge("ok", statgraph.End).AddEdge("boom", statgraph.End))
	_, err := g.Invoke(context.Background(), st{})
	var ne *statgraph.NodeError
	require.ErrorAs(t, err, &ne)
	require.Equal(t, "boom", ne.Node)
}

func TestNodeErrorUnwrapsAndNamesAttempt(t *testing.T) {
	sentinel := errors.New("disk full")
	g := mustCompile(t, statgraph.New[st]().
		AddNode("w", func(context.Context, st) (st, error) { return st{}, sentinel }).
		AddEdge(statgraph.Start, "w").AddEdge("w", statgraph.End))
	_, err := g.Invoke(context.Background(), st{})
	require.ErrorIs(t, err, sentinel)
	require.EqualError(t, err, `statgraph: node "w" attempt 1: disk full`)
}

func TestConcurrentInvokeOnOneGraph(t *testing.T) {
	g := mustCompile(t, w1())
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 32 {
		wg.Go(func() {
			n := 1 + i%7
			out, err := g.Invoke(context.Background(), w1State{MaxRetries: n})
			if err == nil && (out.RetryCount != n || len(out.ErrorHistory) != n+1) {
				err = fmt.Errorf("invoke %d: got %d retries, %d history; want %d, %d", i, out.RetryCount, len(out.ErrorHistory), n, n+1)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func TestRouterFromStart(t *testing.T) {
	g := mustCompile(t, statgraph.New[st]().AddNode("small", step("small")).AddNode("big", step("big")).
		AddConditionalEdges(statgraph.Start, func(_ context.Context, s st) string {
			if s.N > 10 {
				return "big"
			}
			return "small"
		}, map[string]string{"big": "big", "small": "small"}).
		AddEdge("small", statgraph.End).AddEdge("big", statgraph.End))
	out, err := g.Invoke(context.Background(), st{N: 20})
	require.NoError(t, err)
	require.Equal(t, []string{"big"}, out.Log)
}
