package queue

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/pgtest"
)

// statements is a pgx tracer that records each statement a pool's
// connections run, with whether it ran inside a transaction.
type statements struct {
	mu   sync.Mutex
	seen []traced
}

type traced struct {
	sql  string
	inTx bool
}

func (s *statements) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, traced{sql: data.SQL, inTx: conn.PgConn().TxStatus() != 'I'})
	return ctx
}

func (s *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// Migrate's lock is pooler-safe: behind a transaction-mode pooler
// (PgBouncer) only a transaction stays on one server connection, so the
// lock is taken inside a transaction and ends with it
// (pg_try_advisory_xact_lock), never as a session lock and a separate
// unlock, which the pooler may send to another server connection, leaving
// the lock held there. None is left held afterwards.
func TestMigrateLockIsTransactionScoped(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Database(t)
	cfg, err := pgxpool.ParseConfig(db)
	require.NoError(t, err)
	tr := &statements{}
	cfg.ConnConfig.Tracer = tr
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	defer pool.Close()
	require.NoError(t, Migrate(ctx, pool))

	locks := 0
	for _, s := range tr.seen {
		if !strings.Contains(s.sql, "advisory") {
			continue
		}
		locks++
		require.Contains(t, s.sql, "advisory_xact_lock", "a session-level advisory lock or unlock: %s", s.sql)
		require.True(t, s.inTx, "an advisory lock taken outside a transaction: %s", s.sql)
	}
	require.Equal(t, 1, locks, "the migration of a new database takes the lock once")
	require.Zero(t, migrateLocksHeld(t, pool), "advisory locks left held")
	var v int
	require.NoError(t, pool.QueryRow(ctx, `SELECT version FROM statgraph_queue_schema`).Scan(&v))
	require.Equal(t, SchemaVersion, v)
}

// A database already migrated is only read: Migrate waits for no lock, so
// that workers starting while another process migrates another database
// or holds the lock (or a pooler left it held) are not held up.
func TestMigrateUpToDateTakesNoLock(t *testing.T) {
	db := pgtest.Database(t)
	pool, err := Open(context.Background(), db)
	require.NoError(t, err)
	defer pool.Close()
	holder, err := pgx.Connect(context.Background(), db)
	require.NoError(t, err)
	defer holder.Close(context.Background())
	_, err = holder.Exec(context.Background(), `SELECT pg_advisory_lock($1)`, int64(migrateLock))
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, Migrate(ctx, pool), "Migrate on an up-to-date database waited for the lock")
}

// Processes opening one new database at once migrate it once: every Open
// succeeds, the lock making the later ones find River's and statgraph's
// tables there.
func TestConcurrentOpen(t *testing.T) {
	db := pgtest.Database(t)
	const n = 8
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pool, err := Open(context.Background(), db)
			if err == nil {
				pool.Close()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	pool := openTest0(t, db)
	var rows, v int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*), max(version) FROM statgraph_queue_schema`).Scan(&rows, &v))
	require.Equal(t, 1, rows)
	require.Equal(t, SchemaVersion, v)
}

// migrateLocksHeld counts the holders of the migration lock in pool's
// database (pg_locks shows the whole server's).
func migrateLocksHeld(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var held int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND classid = 0 AND objid = $1 AND objsubid = 1`, uint32(migrateLock)).Scan(&held))
	return held
}

// A process that finds another one migrating waits with no transaction
// open: behind a transaction-mode pooler every waiter inside a
// transaction holds a server connection, and with as many waiters as the
// pooler has connections the migrating process, which needs one more for
// River's migrations, never gets it (6 processes behind a PgBouncer of 4
// server connections all timed out). Once the lock is free it migrates.
func TestMigrateWaitsWithoutHoldingAConnection(t *testing.T) {
	db := pgtest.Database(t)
	holder, err := pgx.Connect(context.Background(), db)
	require.NoError(t, err)
	defer holder.Close(context.Background())
	tx, err := holder.Begin(context.Background())
	require.NoError(t, err)
	_, err = tx.Exec(context.Background(), `SELECT pg_advisory_xact_lock($1)`, int64(migrateLock))
	require.NoError(t, err)

	pool := openTest0(t, db)
	done := make(chan error, 1)
	go func() { done <- Migrate(context.Background(), pool) }()
	// Sample the server's connections until Migrate has tried for the lock
	// and then given its connection back (idle, out of any transaction):
	// no sample may show a connection waiting for the lock, and one held
	// in a transaction while Migrate waits is never seen idle. The
	// holder's transaction keeps one snapshot of the statistics unless
	// told to drop it.
	tried := false
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "Migrate did not try for the lock and give its connection back within 30s (tried: %v)", tried)
		_, err := holder.Exec(context.Background(), `SELECT pg_stat_clear_snapshot()`)
		require.NoError(t, err)
		rows, err := holder.Query(context.Background(), `SELECT coalesce(state, ''), coalesce(wait_event_type, ''), query FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`)
		require.NoError(t, err)
		var states []string
		for rows.Next() {
			var state, wait, query string
			require.NoError(t, rows.Scan(&state, &wait, &query))
			require.NotEqual(t, "Lock", wait, "a connection of the waiting Migrate waits for the lock: %q", query)
			if strings.Contains(query, "pg_try_advisory_xact_lock") {
				tried = true
			}
			states = append(states, state)
		}
		require.NoError(t, rows.Err())
		if tried && len(states) > 0 && !slices.ContainsFunc(states, func(s string) bool { return s != "idle" }) {
			break
		}
	}
	select {
	case err := <-done:
		t.Fatalf("Migrate returned while another held the lock: %v", err)
	default:
	}
	require.NoError(t, tx.Rollback(context.Background()))
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Migrate did not go on once the lock was free")
	}
	var v int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT version FROM statgraph_queue_schema`).Scan(&v))
	require.Equal(t, SchemaVersion, v)
}

// openTest0 opens db without migrating it.
func openTest0(t *testing.T, db string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), db)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// schemaVersion, in a transaction that looked for statgraph's tables
// before another process made them (as a migration that takes the lock
// after its BEGIN does), sees them: to_regclass kept the connection's
// cached "no such table" and read 0, and such a process migrated again.
func TestSchemaVersionSeesTablesMadeDuringItsTransaction(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Database(t)
	conn, err := pgx.Connect(ctx, db)
	require.NoError(t, err)
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	have, err := schemaVersion(ctx, tx)
	require.NoError(t, err)
	require.Zero(t, have)

	pool, err := Open(ctx, db) // another process migrates meanwhile
	require.NoError(t, err)
	pool.Close()
	have, err = schemaVersion(ctx, tx)
	require.NoError(t, err)
	require.Equal(t, SchemaVersion, have)
}
