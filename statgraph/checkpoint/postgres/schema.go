package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// migrations[v] moves the store's schema from version v to v+1. Each
// statement may name the store's Postgres schema as {schema}, replaced by
// its quoted name. Add a step to change the schema; never edit a released
// one. Version 0 is a schema without the store's tables.
var migrations = [][]string{
	0: {
		// A thread's number, tid, keys its checkpoints, so a checkpoint's
		// key is two integers whatever the length of the thread's name.
		// Rows are kept when a thread is deleted, so a number is never
		// reused and can be cached.
		`CREATE TABLE {schema}.threads (
			tid  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
			name text NOT NULL UNIQUE
		)`,
		// One row per checkpoint, as in the SQLite store: created is Unix
		// nanoseconds (timestamptz keeps only microseconds); next, pending,
		// counters, interrupts and resumes hold JSON text (see rowenc);
		// base is the oldest checkpoint a load of this one reads
		// (NULL: unknown). NULL stands for empty. A thread's history is one range of the
		// primary key.
		`CREATE TABLE {schema}.checkpoints (
			tid        bigint   NOT NULL,
			id         bigint   NOT NULL,
			parent     bigint   NOT NULL,
			step       bigint   NOT NULL,
			source     text     NOT NULL,
			created    bigint,
			delta      boolean  NOT NULL,
			state      bytea,
			next       text,
			pending    text,
			counters   text,
			interrupts text,
			resumes    text,
			extra      bytea,
			base       bigint,
			PRIMARY KEY (tid, id)
		)`,
		// For people reading the tables with psql.
		`CREATE VIEW {schema}.checkpoint_rows AS
			SELECT t.name AS thread, c.*
			FROM {schema}.threads t JOIN {schema}.checkpoints c USING (tid)`,
	},
}

// schemaVersion is the version this package writes and reads.
var schemaVersion = len(migrations)

// migrate brings the store's tables in schema to schemaVersion in one
// transaction, under a transaction-scoped advisory lock keyed by the schema's
// name, so that processes starting at once migrate one after the other and
// the later ones find the work done. The version is the highest row of
// {schema}.schema_version. A schema newer than schemaVersion is left
// untouched and reported.
func migrate(ctx context.Context, conn interface {
	Begin(context.Context) (pgx.Tx, error)
}, schema string) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) // a no-op once committed
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrationLockKey(schema)); err != nil {
		return fmt.Errorf("waiting for the migration lock: %w", err)
	}
	if err := migrateLocked(ctx, tx, schema); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// migrateLocked is migrate's work in tx, which holds the migration lock.
// Whether schema_version exists is read from pg_class with the statement's
// own snapshot, not with to_regclass: a name lookup goes through the
// backend's catalog cache, which keeps a "no such table" from before the
// lock wait (a pooled connection that looked the name up earlier) and would
// miss the table the process holding the lock just committed.
func migrateLocked(ctx context.Context, tx pgx.Tx, schema string) error {
	q := quote(schema)
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c
		JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = 'schema_version')`, schema).Scan(&exists); err != nil {
		return err
	}
	version := 0
	if exists {
		if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+q+".schema_version").Scan(&version); err != nil {
			return err
		}
	}
	if version > schemaVersion {
		return fmt.Errorf("its checkpoint schema version is %d, but this build of statgraph knows versions up to %d; open it with a newer statgraph or use another schema (postgres.Schema)", version, schemaVersion)
	}
	if version == schemaVersion {
		return nil
	}
	if !exists {
		// A schema made beforehand (by an administrator, for a role that
		// may not create schemas) is used as it is.
		var schemaExists bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", schema).Scan(&schemaExists); err != nil {
			return err
		}
		if !schemaExists {
			if _, err := tx.Exec(ctx, "CREATE SCHEMA "+q); err != nil {
				return fmt.Errorf("creating schema %s: %w; create it as a role that may, or grant CREATE on the database", q, err)
			}
		}
		if _, err := tx.Exec(ctx, "CREATE TABLE "+q+".schema_version (version integer PRIMARY KEY, applied timestamptz NOT NULL DEFAULT now())"); err != nil {
			return fmt.Errorf("creating table %s.schema_version: %w", q, err)
		}
	}
	for v := version; v < schemaVersion; v++ {
		for _, stmt := range migrations[v] {
			if _, err := tx.Exec(ctx, strings.ReplaceAll(stmt, "{schema}", q)); err != nil {
				return fmt.Errorf("migrating schema %s from version %d to %d: %w", q, v, v+1, err)
			}
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+q+".schema_version (version) VALUES ($1)", v+1); err != nil {
			return err
		}
	}
	return nil
}

// migrationLockKey is the advisory lock key of schema's migrations: a fixed
// prefix, so that it is unlikely to collide with another program's keys,
// mixed with a hash of the schema's name.
func migrationLockKey(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("statgraph checkpoint schema\x00" + schema))
	return int64(h.Sum64())
}

// quote returns name as a quoted SQL identifier.
func quote(name string) string { return pgx.Identifier{name}.Sanitize() }

// errNoSchema is returned for an empty schema name.
var errNoSchema = errors.New("the schema name is empty")
