package statgraph_test

import (
	"context"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// inFlight counts the tasks running at once and keeps the highest count
// and the highest number of goroutines seen while one ran.
type inFlight struct {
	now, peak, goroutines atomic.Int64
}

func (f *inFlight) enter() {
	n := f.now.Add(1)
	for p := f.peak.Load(); n > p && !f.peak.CompareAndSwap(p, n); p = f.peak.Load() {
	}
	g := int64(runtime.NumGoroutine())
	for p := f.goroutines.Load(); g > p && !f.goroutines.CompareAndSwap(p, g); p = f.goroutines.Load() {
	}
	// Long enough that tasks started together overlap; the bound, not
	// this wait, is what the test checks.
	time.Sleep(time.Millisecond)
	f.now.Add(-1)
}

// fanOut builds Start -> split, which sends items tasks to "map" (each
// noting itself in f and appending its item), and map -> End.
func fanOut(items int, f *inFlight) *statgraph.Builder[st] {
	return statgraph.New[st]().SetReducer(appendReducer).
		AddNode("split", func(context.Context, st) (st, error) { return st{}, nil }).
		AddSends("split", func(context.Context, st) []statgraph.Send[st] {
			out := make([]statgraph.Send[st], items)
			for i := range out {
				out[i] = statgraph.Send[st]{To: "map", Input: st{N: i}}
			}
			return out
		}, "map").
		AddNode("map", func(_ context.Context, s st) (st, error) {
			f.enter()
			return st{N: 1, Log: []string{strconv.Itoa(s.N)}}, nil
		}).
		AddEdge(statgraph.Start, "split").AddEdge("map", statgraph.End)
}

// Mirrors LangGraph's test_pregel.py test_max_concurrency: 1,000 Sends
// with WithMaxConcurrency(8) never run more than 8 at once, nor start
// 1,000 goroutines, and merge in send order as an unbounded run does. The
// same graph without the bound runs far more at once (what the bound is
// for, and proof the counting sees it).
func TestMaxConcurrencyBoundsSends(t *testing.T) {
	before := runtime.NumGoroutine()
	var bounded inFlight
	g := mustCompile(t, fanOut(1000, &bounded))
	out, err := g.Invoke(context.Background(), st{}, statgraph.WithMaxConcurrency(8))
	require.NoError(t, err)
	require.Equal(t, 1000, out.N)
	for i := range 1000 {
		require.Equal(t, strconv.Itoa(i), out.Log[i], "send order")
	}
	require.LessOrEqual(t, bounded.peak.Load(), int64(8), "tasks at once with WithMaxConcurrency(8)")
	require.Greater(t, bounded.peak.Load(), int64(1), "the bound still runs tasks in parallel")
	require.Less(t, bounded.goroutines.Load(), int64(before+50), "goroutines while the step ran")

	var free inFlight
	g = mustCompile(t, fanOut(1000, &free))
	_, err = g.Invoke(context.Background(), st{})
	require.NoError(t, err)
	require.Greater(t, free.peak.Load(), int64(8), "without the bound the fan-out runs more than 8 at once")
	require.Greater(t, free.goroutines.Load(), int64(before+100), "without the bound a goroutine per task")
}

// The bound meets a failed task and the thread's resume (LangGraph's
// test_send_dedupe_on_resume under max_concurrency): the finished tasks'
// writes are kept, only the failed one runs again, the order holds.
func TestMaxConcurrencyWithFailureAndResume(t *testing.T) {
	savers(t, func(t *testing.T, cp statgraph.Checkpointer) {
		var calls counter
		fail := map[int]bool{7: true, 12: true}
		g := mustCompile(t, mapReduce(20, &calls, fail), statgraph.WithCheckpointer(cp))
		ctx := context.Background()
		_, err := g.Invoke(ctx, st{}, statgraph.WithThread("b"), statgraph.WithMaxConcurrency(3))
		require.ErrorContains(t, err, "failed")
		clear(fail)
		out, err := g.Invoke(ctx, st{}, statgraph.WithThread("b"), statgraph.WithMaxConcurrency(3))
		require.NoError(t, err)
		for i := range 20 {
			want := 1
			if i == 7 || i == 12 {
				want = 2
			}
			require.Equal(t, want, calls.get("map:"+strconv.Itoa(i)), "item %d", i)
			require.Equal(t, strconv.Itoa(i*2), out.Log[i])
		}
		require.Equal(t, "reduced 20", out.Log[20])
	})
}

// The bound meets interrupts: with one task at a time, two Sends that
// pause both pause in the same step and are resumed together.
func TestMaxConcurrencyWithInterrupts(t *testing.T) {
	b := statgraph.New[st]().SetReducer(appendReducer).
		AddNode("split", func(context.Context, st) (st, error) { return st{}, nil }).
		AddSends("split", func(context.Context, st) []statgraph.Send[st] {
			return []statgraph.Send[st]{{To: "ask", Input: st{N: 1}}, {To: "ask", Input: st{N: 2}}}
		}, "ask").
		AddNode("ask", func(ctx context.Context, s st) (st, error) {
			v, err := statgraph.Interrupt[string](ctx, "item "+strconv.Itoa(s.N))
			if err != nil {
				return st{}, err
			}
			return st{Log: []string{v + strconv.Itoa(s.N)}}, nil
		}).
		AddEdge(statgraph.Start, "split").AddEdge("ask", statgraph.End)
	g := mustCompile(t, b, statgraph.WithCheckpointer(statgraph.NewMemoryCheckpointer(false)))
	ctx := context.Background()
	var res statgraph.Result[st]
	_, err := g.Invoke(ctx, st{}, statgraph.WithThread("i"), statgraph.WithMaxConcurrency(1), statgraph.WithResult(&res))
	require.ErrorIs(t, err, statgraph.ErrInterrupted)
	require.Len(t, res.Interrupts, 2, "both tasks of the step ran and paused")
	answers := statgraph.ResumeMap{}
	for _, in := range res.Interrupts {
		answers[in.ID] = "ok"
	}
	out, err := g.Resume(ctx, answers, statgraph.WithThread("i"), statgraph.WithMaxConcurrency(1))
	require.NoError(t, err)
	require.Equal(t, []string{"ok1", "ok2"}, out.Log)
}

// A subgraph's run takes the parent's bound for its own fan-out.
func TestMaxConcurrencyInSubgraph(t *testing.T) {
	var f inFlight
	child := mustCompile(t, fanOut(50, &f))
	parent := statgraph.AddSubgraph(statgraph.New[st]().SetReducer(appendReducer), "child", child,
		func(s st) st { return st{} }, func(p, c st) st { return st{N: c.N} }).
		AddEdge(statgraph.Start, "child").AddEdge("child", statgraph.End)
	g := mustCompile(t, parent)
	out, err := g.Invoke(context.Background(), st{}, statgraph.WithMaxConcurrency(2))
	require.NoError(t, err)
	require.Equal(t, 50, out.N)
	require.LessOrEqual(t, f.peak.Load(), int64(2), "the child's tasks at once")
}
