package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/checkpointtest"
)

func openTest(t testing.TB, opts ...Option) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "checkpoints.db")
	s, err := Open(context.Background(), path, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, s.Close()) })
	return s, path
}

// TestConformance runs the checkpointer conformance suite against a new
// file for each test.
func TestConformance(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) statgraph.Checkpointer {
		s, _ := openTest(t)
		return s
	})
}

func TestPutDuplicate(t *testing.T) {
	s, path := openTest(t)
	ctx := t.Context()
	require.NoError(t, s.Put(ctx, checkpointtest.Checkpoint("t", 1)))
	err := s.Put(ctx, checkpointtest.Checkpoint("t", 1))
	require.Error(t, err)
	assert.ErrorContains(t, err, `checkpoint 1 of thread "t" already exists in `+path)
}

func TestPutCanceled(t *testing.T) {
	s, _ := openTest(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.ErrorIs(t, s.Put(ctx, checkpointtest.Checkpoint("t", 1)), context.Canceled)
	_, err := s.Get(t.Context(), "t", 1)
	require.ErrorIs(t, err, statgraph.ErrNoCheckpoint)
}

func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	ctx := t.Context()
	s, err := Open(ctx, path)
	require.NoError(t, err)
	require.NoError(t, s.Put(ctx, checkpointtest.Checkpoint("t", 1)))
	require.NoError(t, s.Put(ctx, checkpointtest.Checkpoint("t", 2)))
	require.NoError(t, s.Close())

	s, err = Open(ctx, path)
	require.NoError(t, err)
	defer s.Close()
	got, err := s.Get(ctx, "t", 0)
	require.NoError(t, err)
	checkpointtest.Same(t, checkpointtest.Checkpoint("t", 2), got)
	require.NoError(t, s.Put(ctx, checkpointtest.Checkpoint("t", 3)))
}

func TestSettings(t *testing.T) {
	tests := []struct {
		name     string
		opts     []Option
		wantSync int
		wantBusy int
	}{
		{"default", nil, 1, 5000},
		{"full", []Option{Durability(Full)}, 2, 5000},
		{"busy timeout", []Option{BusyTimeout(250 * time.Millisecond)}, 1, 250},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := openTest(t, tt.opts...)
			ctx := t.Context()
			var mode string
			var syncLevel, busy int
			require.NoError(t, s.writer.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode))
			require.NoError(t, s.writer.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&syncLevel))
			require.NoError(t, s.reader.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy))
			assert.Equal(t, "wal", mode)
			assert.Equal(t, tt.wantSync, syncLevel)
			assert.Equal(t, tt.wantBusy, busy)
		})
	}
}

func TestCorruptRow(t *testing.T) {
	tests := []struct {
		name, set, want string
	}{
		{"bad JSON in next", `next = 'not json'`, "column next holds invalid JSON"},
		{"truncated pending", `pending = '[{"n":"a"'`, "column pending holds invalid JSON"},
		{"wrong JSON type in counters", `counters = '["a"]'`, "column counters holds invalid JSON"},
		{"bad base64 in resumes", `resumes = '{"i":"%%%"}'`, "column resumes holds invalid JSON"},
		{"interrupts as a binary blob", `interrupts = x'ff00'`, "column interrupts holds invalid JSON"},
		{"text step", `step = 'three'`, "column step holds text, want an integer"},
		{"real parent", `parent = 1.5`, "column parent holds a real, want an integer"},
		{"text created", `created = 'yesterday'`, "column created holds text, want an integer"},
		{"delta out of range", `delta = 5`, "column delta holds 5, want 0 or 1"},
		{"integer state", `state = 42`, "column state holds an integer, want bytes"},
		{"number in next (stored as text)", `next = 7`, "column next holds invalid JSON"},
		{"number in counters (stored as text)", `counters = 2.5`, "column counters holds invalid JSON"},
		{"empty text next", `next = ''`, "column next holds invalid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, path := openTest(t)
			ctx := t.Context()
			for id := int64(1); id <= 3; id++ {
				require.NoError(t, s.Put(ctx, checkpointtest.Checkpoint("t", id)))
			}
			_, err := s.writer.ExecContext(ctx, "UPDATE checkpoints SET "+tt.set+" WHERE key = (SELECT tid << 32 | 2 FROM threads WHERE name = 't')")
			require.NoError(t, err)

			_, err = s.Get(ctx, "t", 2)
			require.ErrorIs(t, err, statgraph.ErrCorruptCheckpoint)
			assert.ErrorContains(t, err, `thread "t" checkpoint 2 in `+path+": "+tt.want)
			_, err = s.Range(ctx, "t", 0, 0, 0)
			require.ErrorIs(t, err, statgraph.ErrCorruptCheckpoint)
			assert.ErrorContains(t, err, `thread "t" checkpoint 2`)

			got, err := s.Get(ctx, "t", 3)
			require.NoError(t, err, "other rows still read")
			checkpointtest.Same(t, checkpointtest.Checkpoint("t", 3), got)
		})
	}
}

func TestFutureSchemaVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "future.db")
	ctx := t.Context()
	s, err := Open(ctx, path)
	require.NoError(t, err)
	require.NoError(t, s.Put(ctx, checkpointtest.Checkpoint("t", 1)))
	require.NoError(t, s.Close())
	setUserVersion(t, path, schemaVersion+6)

	_, err = Open(ctx, path)
	require.Error(t, err)
	assert.ErrorContains(t, err, fmt.Sprintf("opening checkpoint store %s: its checkpoint schema version is %d, but this build of statgraph knows versions up to %d",
		path, schemaVersion+6, schemaVersion))
	assert.Equal(t, schemaVersion+6, userVersion(t, path), "the file is left as it was")
}

func TestMigrateFromEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "empty.db")
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	ctx := t.Context()
	s, err := Open(ctx, path)
	require.NoError(t, err)
	require.NoError(t, s.Put(ctx, checkpointtest.Checkpoint("t", 1)))
	require.NoError(t, s.Close())
	assert.Equal(t, schemaVersion, userVersion(t, path))
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	notDB := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(notDB, []byte("these are not the pages you are looking for, not at all, not a database"), 0o600))
	tests := []struct{ name, path, want string }{
		{"empty path", "", "must be a plain file name"},
		{"memory", ":memory:", "must be a plain file name"},
		{"query in path", filepath.Join(dir, "a.db?mode=ro"), "must be a plain file name"},
		{"not a database", notDB, "opening checkpoint store " + notDB},
		{"missing directory", filepath.Join(dir, "no", "such", "dir.db"), "opening checkpoint store " + filepath.Join(dir, "no")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(t.Context(), tt.path)
			require.Error(t, err)
			assert.Nil(t, s)
			assert.ErrorContains(t, err, tt.want)
		})
	}
}

func setUserVersion(t *testing.T, path string, v int) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(fmt.Sprintf("PRAGMA user_version = %d", v))
	require.NoError(t, err)
}

func userVersion(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	var v int
	require.NoError(t, db.QueryRow("PRAGMA user_version").Scan(&v))
	return v
}

// TestTwoStoresOneFile has two Stores, as two processes would, write to one
// file at once: the busy timeout, not Go, orders their writes.
func TestTwoStoresOneFile(t *testing.T) {
	first, path := openTest(t)
	second, err := Open(t.Context(), path)
	require.NoError(t, err)
	defer second.Close()
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		store := first
		if g%2 == 1 {
			store = second
		}
		wg.Go(func() {
			for id := int64(1); id <= 50; id++ {
				// Threads 0-3 are shared by both stores, with distinct ids.
				if err := store.Put(ctx, checkpointtest.Checkpoint(fmt.Sprint("shared-", g/2), id*2+int64(g%2))); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for th := range 4 {
		for _, s := range []*Store{first, second} {
			cps, err := s.Range(ctx, fmt.Sprint("shared-", th), 0, 0, 0)
			require.NoError(t, err)
			assert.Len(t, cps, 100)
		}
	}
	var check string
	require.NoError(t, second.writer.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&check))
	assert.Equal(t, "ok", check)
}
