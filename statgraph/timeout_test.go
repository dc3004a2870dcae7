package statgraph_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
)

// Issue 23: a timeout frees the run. Mirrors LangGraph's
// test_pregel_async.py test_step_timeout_on_stream_hang (the run ends at the
// deadline while the hung node is still running): a node that ignores its
// ctx is abandoned at its WithTimeout deadline and its fallback runs at
// once; the step waited for the node before.
func TestTimeoutFreesTheRun(t *testing.T) {
	release, finished := make(chan struct{}), make(chan struct{})
	hang := time.AfterFunc(3*time.Second, func() { close(release) })
	defer func() {
		if hang.Stop() {
			close(release)
		}
		<-finished // the abandoned node ends before the test does
	}()
	b := statgraph.New[st]().
		AddNode("hung", func(context.Context, st) (st, error) {
			defer close(finished)
			<-release // ignores its ctx
			return st{Log: []string{"late"}}, nil
		}, statgraph.WithTimeout(20*time.Millisecond), statgraph.WithFallback("fallback")).
		AddNode("fallback", func(ctx context.Context, s st) (st, error) {
			return st{Log: []string{"fallback: " + statgraph.RuntimeOf(ctx).Fallback.Error()}}, nil
		}).
		AddEdge(statgraph.Start, "hung").AddEdge("hung", statgraph.End).AddEdge("fallback", statgraph.End)
	g := mustCompile(t, b)
	start := time.Now()
	out, err := g.Invoke(context.Background(), st{})
	elapsed := time.Since(start)
	require.NoError(t, err)
	require.Less(t, elapsed, time.Second, "the run waited for the hung node")
	require.Len(t, out.Log, 1)
	require.Contains(t, out.Log[0], "WithTimeout(20ms)")
}
