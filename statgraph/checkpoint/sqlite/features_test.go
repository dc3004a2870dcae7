package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

type fanState struct {
	Item int
	Log  []string
}

// fanGraph sends one "work" task per item and joins the tasks with a
// one-step side branch into "report". work fails for item bad while *fail.
func fanGraph(t *testing.T, cp statgraph.Checkpointer, calls map[string]int, mu *sync.Mutex, bad int, fail *bool) *statgraph.Graph[fanState] {
	count := func(name string) {
		mu.Lock()
		defer mu.Unlock()
		calls[name]++
	}
	b := statgraph.New[fanState]().
		SetReducer(func(cur, upd fanState) fanState {
			cur.Log = statgraph.Append(cur.Log, upd.Log)
			return cur
		}).
		AddNode("split", func(context.Context, fanState) (fanState, error) { return fanState{}, nil }).
		AddSends("split", func(context.Context, fanState) []statgraph.Send[fanState] {
			out := make([]statgraph.Send[fanState], 10)
			for i := range out {
				out[i] = statgraph.Send[fanState]{To: "work", Input: fanState{Item: i}}
			}
			return out
		}, "work").
		AddNode("work", func(_ context.Context, s fanState) (fanState, error) {
			count("work:" + strconv.Itoa(s.Item))
			if s.Item == bad && *fail {
				return fanState{}, fmt.Errorf("item %d crashed", s.Item)
			}
			return fanState{Log: []string{"w" + strconv.Itoa(s.Item)}}, nil
		}).
		AddNode("side", func(context.Context, fanState) (fanState, error) { return fanState{Log: []string{"side"}}, nil }).
		AddNode("report", func(context.Context, fanState) (fanState, error) {
			count("report")
			return fanState{Log: []string{"report"}}, nil
		}).
		AddEdge(statgraph.Start, "split").AddEdge(statgraph.Start, "side").
		AddJoin([]string{"work", "side"}, "report").AddEdge("report", statgraph.End)
	g, err := b.Compile(statgraph.WithCheckpointer(cp))
	require.NoError(t, err)
	return g
}

// Send tasks and a waiting join resumed from SQLite after the store is
// closed and reopened (a restarted process): only the task that failed
// runs again, and the join, whose side branch arrived before the crash,
// runs once.
func TestSendAndJoinResumeFromSQLite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "checkpoints.db")
	s, err := Open(ctx, path)
	require.NoError(t, err)
	calls, mu, fail := map[string]int{}, &sync.Mutex{}, true
	_, err = fanGraph(t, s, calls, mu, 3, &fail).Invoke(ctx, fanState{}, statgraph.WithThread("fan"))
	require.ErrorContains(t, err, "item 3 crashed")
	require.NoError(t, s.Close())

	s2, err := Open(ctx, path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s2.Close() })
	fail = false
	out, err := fanGraph(t, s2, calls, mu, 3, &fail).Invoke(ctx, fanState{}, statgraph.WithThread("fan"))
	require.NoError(t, err)
	for i := range 10 {
		want := 1
		if i == 3 {
			want = 2
		}
		require.Equal(t, want, calls["work:"+strconv.Itoa(i)], "item %d", i)
	}
	require.Equal(t, 1, calls["report"])
	require.Equal(t, []string{"side", "w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8", "w9", "report"}, out.Log)
}
