package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/checkpointtest"
)

// TestMigrateAddsBase opens a file of schema version 1, whose rows have no
// base: they read as Base 0 (unknown), and new rows keep theirs.
func TestMigrateAddsBase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	for _, q := range migrations[0] {
		_, err := db.Exec(q)
		require.NoError(t, err)
	}
	for _, q := range []string{
		"PRAGMA user_version = 1",
		"INSERT INTO threads (tid, name) VALUES (1, 'a')",
		"INSERT INTO checkpoints (key, parent, step, source, delta, state) VALUES (4294967297, 0, 0, 'input', 0, '{}')",
	} {
		_, err := db.Exec(q)
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())

	s, err := Open(ctx, path)
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, 2, userVersion(t, path))
	old, err := s.Get(ctx, "a", 1)
	require.NoError(t, err)
	require.Zero(t, old.Base, "a version-1 row does not know its base")
	c := checkpointtest.Checkpoint("a", 2)
	c.Base = 2
	require.NoError(t, s.Put(ctx, c))
	got, err := s.Range(ctx, "a", 1, 0, 0)
	require.NoError(t, err)
	require.Equal(t, []int64{2, 1}, rangeIDs(got))
	require.EqualValues(t, 2, got[0].Base)
}

func rangeIDs(cps []*statgraph.Checkpoint) []int64 {
	out := make([]int64, len(cps))
	for i, c := range cps {
		out[i] = c.ID
	}
	return out
}
