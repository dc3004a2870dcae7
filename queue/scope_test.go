package queue

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/stretchr/testify/require"
)

// Two plans with the same thread names, run through different remotes,
// share one store without seeing each other's checkpoints; each reads its
// checkpoints back under the name it wrote them with, and deleting one's
// thread leaves the other's.
func TestScopedKeepsTheThreadsOfTwoRemotesApart(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "runs.db"))
	require.NoError(t, err)
	defer st.Close()
	a, b := Scoped(st, "file:///a.git"), Scoped(st, "file:///b.git")
	const thread = "tasks-abc123/task-1"
	for i, s := range []statgraph.Checkpointer{a, b} {
		require.NoError(t, s.Put(ctx, &statgraph.Checkpoint{Thread: thread, ID: 1, Step: i, Source: "input", Base: 1, State: []byte(`{}`)}))
	}
	for i, s := range []statgraph.Checkpointer{a, b} {
		got, err := s.Get(ctx, thread, 0)
		require.NoError(t, err)
		require.Equal(t, thread, got.Thread)
		require.Equal(t, i, got.Step, "each remote's plan reads its own checkpoint")
		list, err := s.Range(ctx, thread, 0, 0, 0)
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.Equal(t, thread, list[0].Thread)
	}
	_, err = st.Get(ctx, thread, 0)
	require.ErrorIs(t, err, statgraph.ErrNoCheckpoint, "nothing is stored under the unscoped name")
	_, err = a.Delete(ctx, thread, 0)
	require.NoError(t, err)
	_, err = a.Get(ctx, thread, 0)
	require.ErrorIs(t, err, statgraph.ErrNoCheckpoint)
	got, err := b.Get(ctx, thread, 0)
	require.NoError(t, err)
	require.Equal(t, 1, got.Step)
	require.NotEqual(t, Scope("file:///a.git"), Scope("file:///b.git"))
	require.Equal(t, Scope("file:///a.git"), Scope("file:///a.git"))
}
