// Package postgres is a statgraph.Checkpointer that keeps checkpoints in a
// PostgreSQL database, through github.com/jackc/pgx/v5 and its pool. It is
// the store for runs spread over several processes or machines (statgraph
// workers share one database); for one process, the SQLite store
// (checkpoint/sqlite) needs no server. It lives in its own package so that
// statgraph itself needs no database driver.
//
// The tables live in one Postgres schema, "statgraph" unless Schema says
// otherwise, so they can sit beside other programs' tables (River's queue,
// say) in the same database. The layout follows the SQLite store's: a
// threads table gives each thread a number, and each checkpoint is one row
// keyed by (thread number, id), so a thread's history is one range of the
// primary key; the collections of a checkpoint are JSON text, encoded as
// the SQLite store encodes them. A Put is one INSERT, its own transaction;
// the first Put of a thread (per Store) also records the thread's number,
// in the same transaction. Reads and writes share the pool.
//
// pgx caches prepared statements on each connection. Behind a pooler in
// transaction mode (PgBouncer), which hands each transaction to any server
// connection, add default_query_exec_mode=exec to the connection string.
//
// # Schema versions
//
// Open and New create the schema and its tables when missing and apply the
// migrations an older schema lacks, in one transaction under an advisory
// lock, so processes that start at once migrate one after the other. The
// versions applied are rows of the schema_version table. Tables from a
// newer statgraph are refused with an error naming both versions, and left
// as they were.
//
// # Durability
//
// Put returns once Postgres has committed the row: with the server's
// default synchronous_commit=on, the checkpoint survives a crash of the
// process, of the server and of the machine. A run resumed from another
// process or machine sees every checkpoint whose Put returned.
//
// A row that does not decode (invalid JSON in a column, edited by hand or
// by a faulty tool) is reported as an error wrapping
// statgraph.ErrCorruptCheckpoint that names the schema, the database, the
// thread and the checkpoint id; it is never a panic.
package postgres
