package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// SchemaVersion is the version of statgraph's own tables this build knows.
const SchemaVersion = 3

// migrateLock is the advisory lock key Migrate holds, so that workers and
// a coordinator starting together migrate once.
const migrateLock = 0x5347_5155 // "SGQU"

const schemaSQL = `
CREATE TABLE IF NOT EXISTS statgraph_queue_schema (version int NOT NULL);
CREATE TABLE IF NOT EXISTS statgraph_units (
	plan        text        NOT NULL,
	unit        text        NOT NULL,
	generation  int         NOT NULL,
	job_id      bigint,
	token       uuid,
	worker      uuid,
	claims      int         NOT NULL DEFAULT 0,
	enqueued_at timestamptz NOT NULL DEFAULT now(),
	started_at  timestamptz,
	lease_until timestamptz,
	finished_at timestamptz,
	result      jsonb,
	staged      jsonb,
	PRIMARY KEY (plan, unit, generation)
);
CREATE TABLE IF NOT EXISTS statgraph_files (
	hash      text        PRIMARY KEY,
	data      bytea       NOT NULL,
	stored_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS statgraph_refusals (
	plan       text        NOT NULL,
	unit       text        NOT NULL,
	generation int         NOT NULL,
	token      uuid        NOT NULL,
	worker     uuid        NOT NULL,
	at         timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS statgraph_spend (
	run          uuid        PRIMARY KEY,
	plan         text        NOT NULL,
	tokens       bigint      NOT NULL DEFAULT 0,
	usd          numeric     NOT NULL DEFAULT 0,
	limit_tokens bigint,
	limit_usd    numeric,
	started_at   timestamptz NOT NULL DEFAULT now(),
	updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS statgraph_workers (
	id          uuid        PRIMARY KEY,
	host        text        NOT NULL,
	pid         int         NOT NULL,
	concurrency int         NOT NULL,
	started_at  timestamptz NOT NULL DEFAULT now(),
	last_seen   timestamptz NOT NULL DEFAULT now(),
	stopped_at  timestamptz,
	units       jsonb       NOT NULL DEFAULT '[]'
);
`

// ErrNewerSchema is returned by Migrate when the database holds a newer
// statgraph schema than this build knows; nothing is changed.
var ErrNewerSchema = errors.New("queue: the database has a newer statgraph schema")

// Migrate brings the database to River's latest schema and statgraph's
// SchemaVersion. It is idempotent and safe to call from many processes at
// once, directly or behind a transaction-mode pooler (PgBouncer), which
// hands each transaction to any server connection:
//
//   - a database already up to date is only read, with no lock;
//   - otherwise the migration runs under a transaction-scoped advisory
//     lock (pg_try_advisory_xact_lock) held by a transaction that stays
//     open until River's migrations and statgraph's tables are done, so
//     it ends with that transaction on the server connection that took it
//     (a session-level lock and an unlock in a later statement may reach
//     different server connections behind a pooler, leaving it held);
//   - a process that finds the lock taken does not wait inside a
//     transaction (behind a pooler, waiters would hold every server
//     connection while the holder needs one more for River's migrations):
//     it tries again every migratePoll, and stops once the database is up
//     to date.
//
// River's migrations run in transactions of their own, on another of the
// pool's connections: the pool (and a pooler's pool) needs two. It refuses,
// changing nothing, a database whose statgraph schema is newer
// (ErrNewerSchema): upgrade statgraph on this machine. It fails when ctx
// ends first.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	m, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("queue: River migrator: %w", err)
	}
	for {
		have, err := schemaVersion(ctx, pool)
		if err != nil {
			return err
		}
		if have > SchemaVersion {
			return newerSchema(have)
		}
		if have == SchemaVersion {
			if v, err := m.Validate(ctx, nil); err == nil && v.OK {
				return nil // up to date: the usual case for a worker starting
			}
		}
		done, err := migrateLocked(ctx, pool, m)
		if done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("queue: wait for another process's migration: %w", ctx.Err())
		case <-time.After(migratePoll):
		}
	}
}

// migratePoll is how often Migrate tries for the lock another process's
// migration holds.
const migratePoll = 100 * time.Millisecond

// migrateLocked migrates under the migration lock, and returns done false
// (nothing done) when another process holds it.
func migrateLocked(ctx context.Context, pool *pgxpool.Pool, m *rivermigrate.Migrator[pgx.Tx]) (done bool, err error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("queue: connect to Postgres: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) // a no-op once committed
	var locked bool
	if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock($1)`, int64(migrateLock)).Scan(&locked); err != nil {
		return false, fmt.Errorf("queue: lock for migration: %w", err)
	}
	if !locked {
		return false, nil
	}
	// Read again under the lock: another process may have migrated.
	have, err := schemaVersion(ctx, tx)
	if err != nil {
		return false, err
	}
	if have > SchemaVersion {
		return false, newerSchema(have)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return false, fmt.Errorf("queue: River's migrations: %w", err)
	}
	if have < SchemaVersion {
		if _, err := tx.Exec(ctx, schemaSQL); err != nil {
			return false, fmt.Errorf("queue: create statgraph's tables: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM statgraph_queue_schema; INSERT INTO statgraph_queue_schema SELECT `+fmt.Sprint(SchemaVersion)); err != nil {
			return false, fmt.Errorf("queue: record statgraph's schema version: %w", err)
		}
	}
	return true, tx.Commit(ctx)
}

// schemaVersion reads the version of statgraph's tables in the database q
// reaches, 0 when they are not there yet. Whether the table exists is read
// from pg_class with the statement's snapshot, not with to_regclass, whose
// name lookup goes through the backend's catalog cache: inside a
// transaction that began before another process committed the table (the
// lock taken after BEGIN), a "no such table" cached on that pooled
// connection would stand, and this process would migrate again.
func schemaVersion(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (int, error) {
	var exists bool
	if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class
		WHERE relname = 'statgraph_queue_schema' AND relkind = 'r' AND pg_catalog.pg_table_is_visible(oid))`).Scan(&exists); err != nil {
		return 0, fmt.Errorf("queue: read statgraph's schema version: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var have int
	if err := q.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM statgraph_queue_schema`).Scan(&have); err != nil {
		return 0, fmt.Errorf("queue: read statgraph's schema version: %w", err)
	}
	return have, nil
}

// newerSchema is the error of a database whose statgraph schema is at
// version have, newer than this build's.
func newerSchema(have int) error {
	return fmt.Errorf("%w (version %d, this statgraph knows %d): upgrade statgraph", ErrNewerSchema, have, SchemaVersion)
}

// Open connects to the Postgres at url (a postgres:// URL or key=value
// string) and migrates it (see Migrate). The pool is safe for concurrent
// use; the caller closes it.
func Open(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("queue: --queue %q is not a Postgres connection string: %w", Redact(url), err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("queue: connect to Postgres at %s: %w", Redact(url), err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("queue: connect to Postgres at %s: %w; is it running, and does the URL name the right user and database?", Redact(url), err)
	}
	if err := Migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return pool, nil
}
