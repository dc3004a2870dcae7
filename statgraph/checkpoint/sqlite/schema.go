package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations[v] moves a database from schema version v to v+1. The version
// is kept in PRAGMA user_version; 0 is a new or empty file. Add a step to
// change the schema; never edit a released one.
var migrations = [][]string{
	0: {
		// A thread's number, tid, prefixes the keys of its checkpoints.
		// Rows are kept when a thread is deleted, so a number is never
		// reused and can be cached.
		`CREATE TABLE threads (
			tid  INTEGER PRIMARY KEY,
			name TEXT NOT NULL UNIQUE
		)`,
		// One row per checkpoint. key is tid<<32 | id, the primary key
		// (thread, id) packed into the rowid: a thread's checkpoints are
		// one key range, appended in order, so a Put writes about one
		// page, as a plain append-only table does. (A WITHOUT ROWID table
		// keyed by (thread, id) wrote 1.7 times as many WAL frames per
		// insert.) next, pending, counters, interrupts and resumes hold
		// JSON; NULL stands for empty.
		`CREATE TABLE checkpoints (
			key        INTEGER PRIMARY KEY,
			parent     INTEGER NOT NULL,
			step       INTEGER NOT NULL,
			source     TEXT    NOT NULL,
			created    INTEGER,
			delta      INTEGER NOT NULL,
			state      BLOB,
			next       TEXT,
			pending    TEXT,
			counters   TEXT,
			interrupts TEXT,
			resumes    TEXT,
			extra      BLOB
		)`,
		// For people reading the file with the sqlite3 shell.
		`CREATE VIEW checkpoint_rows AS
			SELECT t.name AS thread, c.key & 0xffffffff AS id, c.*
			FROM threads t JOIN checkpoints c
			ON c.key BETWEEN t.tid << 32 AND (t.tid << 32) | 0xffffffff`,
	},
	1: {
		// base: the oldest checkpoint a load of this one reads
		// (statgraph.Checkpoint.Base); NULL in rows of version 0, which
		// read as 0, unknown.
		`ALTER TABLE checkpoints ADD COLUMN base INTEGER`,
	},
}

// schemaVersion is the version this package writes and reads.
var schemaVersion = len(migrations)

// migrate brings the database of db to schemaVersion in one immediate
// transaction. A database newer than schemaVersion is left untouched and
// reported.
func migrate(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // a no-op once committed
	var version int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	if version > schemaVersion {
		return fmt.Errorf("its checkpoint schema version is %d, but this build of statgraph knows versions up to %d; open it with a newer statgraph or use another file", version, schemaVersion)
	}
	if version == schemaVersion {
		return nil
	}
	for v := version; v < schemaVersion; v++ {
		for _, stmt := range migrations[v] {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("migrating schema from version %d to %d: %w", v, v+1, err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return err
	}
	return tx.Commit()
}
