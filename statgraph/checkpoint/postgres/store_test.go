package postgres

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/checkpointtest"
	"github.com/statgraph/statgraph/statgraph/checkpoint/postgres/postgrestest"
)

// openTest opens a store in a new schema of the test server, dropped when
// the test ends. It returns the connection string and the schema's name.
func openTest(t testing.TB) (*Store, string, string) {
	t.Helper()
	return openIn(t, postgrestest.ConnString(t))
}

// openIn is openTest on the server conn names.
func openIn(t testing.TB, conn string) (*Store, string, string) {
	t.Helper()
	schema := postgrestest.Schema(t, conn)
	s, err := Open(context.Background(), conn, Schema(schema))
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s, conn, schema
}

// TestConformance runs the checkpointer conformance suite, each test in a
// schema of its own.
func TestConformance(t *testing.T) {
	conn := postgrestest.ConnString(t)
	checkpointtest.Run(t, func(t *testing.T) statgraph.Checkpointer {
		s, _, _ := openIn(t, conn)
		return s
	})
}

// TestSixteenStores has 16 stores, each with its own pool as 16 processes
// would have, write at once: each its own thread, and all of them one new
// thread that none has written before, with distinct ids.
func TestSixteenStores(t *testing.T) {
	first, conn, schema := openTest(t)
	ctx := t.Context()
	const writers, perThread = 16, 50
	stores := []*Store{first}
	for range writers - 1 {
		s, err := Open(ctx, conn, Schema(schema))
		require.NoError(t, err)
		t.Cleanup(s.Close)
		stores = append(stores, s)
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	start := make(chan struct{})
	for g, s := range stores {
		wg.Go(func() {
			<-start
			for i := int64(1); i <= perThread; i++ {
				// Every store's first Put adds the shared thread.
				if err := s.Put(ctx, checkpointtest.Checkpoint("shared", i*writers+int64(g))); err != nil {
					errs <- err
					return
				}
				if err := s.Put(ctx, checkpointtest.Checkpoint(fmt.Sprint("own-", g), i)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for g, s := range stores {
		cps, err := s.Range(ctx, "shared", 0, 0, 0)
		require.NoError(t, err)
		require.Len(t, cps, writers*perThread)
		assert.Equal(t, int64(perThread*writers+writers-1), cps[0].ID)
		own, err := first.Range(ctx, fmt.Sprint("own-", g), 0, 0, 0)
		require.NoError(t, err)
		require.Len(t, own, perThread)
	}
	var threads int
	require.NoError(t, first.pool.QueryRow(ctx, "SELECT count(*) FROM "+quote(schema)+".threads WHERE name = 'shared'").Scan(&threads))
	assert.Equal(t, 1, threads, "the shared thread has one number")
}

func TestPutDuplicateNamesTheStore(t *testing.T) {
	s, _, schema := openTest(t)
	ctx := t.Context()
	require.NoError(t, s.Put(ctx, checkpointtest.Checkpoint("t", 1)))
	err := s.Put(ctx, checkpointtest.Checkpoint("t", 1))
	require.Error(t, err)
	assert.ErrorContains(t, err, fmt.Sprintf(`checkpoint 1 of thread "t" already exists in schema %q of database`, schema))
	assert.ErrorContains(t, err, "checkpoint ids must grow within a thread")
}

func TestPutCanceled(t *testing.T) {
	s, _, _ := openTest(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	require.ErrorIs(t, s.Put(ctx, checkpointtest.Checkpoint("t", 1)), context.Canceled)
	require.NoError(t, s.Put(t.Context(), checkpointtest.Checkpoint("known", 1)))
	require.ErrorIs(t, s.Put(ctx, checkpointtest.Checkpoint("known", 2)), context.Canceled)
	for _, th := range []string{"t", "known"} {
		cps, err := s.Range(t.Context(), th, 0, 0, 0)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(cps), 1, "thread %s: a cancelled Put stores nothing", th)
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
		{"interrupts not a list", `interrupts = '{}'`, "column interrupts holds invalid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, schema := openTest(t)
			ctx := t.Context()
			for id := int64(1); id <= 3; id++ {
				require.NoError(t, s.Put(ctx, checkpointtest.Checkpoint("t", id)))
			}
			q := quote(schema)
			_, err := s.pool.Exec(ctx, "UPDATE "+q+".checkpoints SET "+tt.set+" WHERE id = 2 AND tid = (SELECT tid FROM "+q+".threads WHERE name = 't')")
			require.NoError(t, err)
			_, err = s.Get(ctx, "t", 2)
			require.ErrorIs(t, err, statgraph.ErrCorruptCheckpoint)
			assert.ErrorContains(t, err, fmt.Sprintf(`thread "t" checkpoint 2 in schema %q of database`, schema))
			assert.ErrorContains(t, err, tt.want)
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
	s, conn, schema := openTest(t)
	ctx := t.Context()
	require.NoError(t, s.Put(ctx, checkpointtest.Checkpoint("t", 1)))
	q := quote(schema)
	_, err := s.pool.Exec(ctx, "INSERT INTO "+q+".schema_version (version) VALUES ($1)", schemaVersion+6)
	require.NoError(t, err)
	before := tableDump(t, s.pool, schema)

	_, err = Open(ctx, conn, Schema(schema))
	require.Error(t, err)
	assert.ErrorContains(t, err, fmt.Sprintf("postgres: opening checkpoint store in schema %q of database", schema))
	assert.ErrorContains(t, err, fmt.Sprintf("its checkpoint schema version is %d, but this build of statgraph knows versions up to %d", schemaVersion+6, schemaVersion))
	assert.Equal(t, before, tableDump(t, s.pool, schema), "the schema is left as it was")
}

// tableDump lists the tables of schema with their row counts and the
// schema versions recorded.
func tableDump(t *testing.T, pool *pgxpool.Pool, schema string) string {
	t.Helper()
	ctx := t.Context()
	rows, err := pool.Query(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1", schema)
	require.NoError(t, err)
	var names []string
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		names = append(names, n)
	}
	require.NoError(t, rows.Err())
	var b strings.Builder
	for _, n := range names {
		var count int
		require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM "+quote(schema)+"."+quote(n)).Scan(&count))
		fmt.Fprintf(&b, "%s:%d ", n, count)
	}
	var versions []int32
	require.NoError(t, pool.QueryRow(ctx, "SELECT array_agg(version ORDER BY version) FROM "+quote(schema)+".schema_version").Scan(&versions))
	fmt.Fprint(&b, versions)
	return b.String()
}

// TestConcurrentOpen has 8 processes' worth of stores open one new schema
// at once: the advisory lock lets one migrate and the others find it done.
func TestConcurrentOpen(t *testing.T) {
	conn := postgrestest.ConnString(t)
	schema := postgrestest.Schema(t, conn)
	ctx := t.Context()
	var wg sync.WaitGroup
	stores := make([]*Store, 8)
	errs := make([]error, 8)
	for i := range stores {
		wg.Go(func() { stores[i], errs[i] = Open(ctx, conn, Schema(schema)) })
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "store %d", i)
		t.Cleanup(stores[i].Close)
	}
	var versions []int32
	require.NoError(t, stores[0].pool.QueryRow(ctx, "SELECT array_agg(version ORDER BY version) FROM "+quote(schema)+".schema_version").Scan(&versions))
	assert.Len(t, versions, schemaVersion, "each migration ran once")
	require.NoError(t, stores[3].Put(ctx, checkpointtest.Checkpoint("t", 1)))
	_, err := stores[5].Get(ctx, "t", 1)
	require.NoError(t, err)
}

// TestNewLeavesThePool checks that a store made by New on the caller's
// pool, in a schema beside other tables, leaves both alone.
func TestNewLeavesThePool(t *testing.T) {
	conn := postgrestest.ConnString(t)
	schema := postgrestest.Schema(t, conn)
	ctx := t.Context()
	pool, err := pgxpool.New(ctx, conn)
	require.NoError(t, err)
	defer pool.Close()
	_, err = pool.Exec(ctx, "CREATE SCHEMA "+quote(schema))
	require.NoError(t, err)
	_, err = pool.Exec(ctx, "CREATE TABLE "+quote(schema)+".river_job (id bigint)")
	require.NoError(t, err)
	s, err := New(ctx, pool, Schema(schema))
	require.NoError(t, err)
	require.NoError(t, s.Put(ctx, checkpointtest.Checkpoint("t", 1)))
	s.Close()
	var n int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM "+quote(schema)+".checkpoints").Scan(&n), "the pool is still open")
	assert.Equal(t, 1, n)
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM "+quote(schema)+".river_job").Scan(&n), "the other table is kept")
}

func TestOpenErrors(t *testing.T) {
	conn := postgrestest.ConnString(t)
	ctx := t.Context()
	tests := []struct{ name, conn, schema, want, notWant string }{
		{"bad connection string", "postgres://u:secret@host:notaport/db", "x", "the connection string does not parse", "secret"},
		{"no server", "postgres://u:secret@127.0.0.1:1/db?sslmode=disable&connect_timeout=5", "x", `database "db" on 127.0.0.1:1`, "secret"},
		{"empty schema", conn, "", "the schema name is empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(ctx, tt.conn, Schema(tt.schema))
			require.Error(t, err)
			assert.Nil(t, s)
			assert.ErrorContains(t, err, "postgres: opening checkpoint store")
			assert.ErrorContains(t, err, tt.want)
			if tt.notWant != "" {
				assert.NotContains(t, err.Error(), tt.notWant)
			}
		})
	}
}

// TestPrecreatedSchema opens a store as a role that may not create
// schemas, in a schema an administrator made for it: the store uses the
// schema and creates only its tables.
func TestPrecreatedSchema(t *testing.T) {
	conn := postgrestest.ConnString(t)
	ctx := t.Context()
	admin, err := pgxpool.New(ctx, conn)
	require.NoError(t, err)
	t.Cleanup(admin.Close) // after the role is dropped
	var canCreateRoles bool
	require.NoError(t, admin.QueryRow(ctx, "SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user").Scan(&canCreateRoles))
	if !canCreateRoles {
		if os.Getenv("CI") == "true" {
			t.Fatal("the role of STATGRAPH_TEST_POSTGRES needs CREATEROLE for this test (.ci/postgres grants it)")
		}
		t.Skip("the role of STATGRAPH_TEST_POSTGRES lacks CREATEROLE, which this test needs")
	}
	role := postgrestest.Schema(t, conn) + "_role" // a unique name
	_, err = admin.Exec(ctx, "CREATE ROLE "+quote(role)+" LOGIN PASSWORD 'pw'")
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := admin.Exec(context.Background(), "DROP ROLE "+quote(role))
		assert.NoError(t, err)
	})
	schema := postgrestest.Schema(t, conn) // dropped before the role
	_, err = admin.Exec(ctx, "CREATE SCHEMA "+quote(schema))
	require.NoError(t, err)
	_, err = admin.Exec(ctx, "GRANT USAGE, CREATE ON SCHEMA "+quote(schema)+" TO "+quote(role))
	require.NoError(t, err)

	cfg, err := pgxpool.ParseConfig(conn)
	require.NoError(t, err)
	cfg.ConnConfig.User, cfg.ConnConfig.Password = role, "pw"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	defer pool.Close()
	s, err := New(ctx, pool, Schema(schema))
	require.NoError(t, err)
	require.NoError(t, s.Put(ctx, checkpointtest.Checkpoint("t", 1)))
	_, err = New(ctx, pool, Schema(schema+"_other"))
	require.ErrorContains(t, err, "create it as a role that may, or grant CREATE on the database", "a role that may not create schemas is told what to do")
}
