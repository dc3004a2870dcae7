// Package sqlite is a statgraph.Checkpointer that keeps checkpoints in one
// SQLite file, through the pure-Go driver modernc.org/sqlite (no cgo). It is
// the embedded default for durable runs; it lives in its own package so
// that statgraph itself needs no database driver.
//
// Each checkpoint is one row whose integer key packs the thread's number
// and the checkpoint id, so a thread's history is one key range appended in
// order (the view checkpoint_rows shows thread names and ids). A Put is one
// INSERT, its own transaction; the first Put of a thread also records the
// thread's number, in the same transaction. Writes go through a single
// connection, so concurrent Puts queue in Go instead of failing with
// SQLITE_BUSY; reads use a separate pool of query-only connections and, in
// WAL mode, never wait for a write. The schema version is kept in PRAGMA user_version and
// migrated by Open; a file from a newer statgraph is refused, not modified.
//
// # Durability
//
// The file is in WAL mode with a busy timeout of 5 s. By default
// (Durability(Normal), PRAGMA synchronous=NORMAL):
//
//   - a process crash (panic, SIGKILL, OOM kill) loses nothing that Put
//     returned for: a commit is in the WAL file, in the operating system's
//     page cache, before Put returns, and the next Open recovers it;
//   - a power loss or operating-system crash may lose the last few
//     checkpoints, those not yet synced by a WAL checkpoint, but never
//     corrupts the database: it opens at an earlier consistent checkpoint,
//     from which a run resumes by re-running the steps after it.
//
// With Durability(Full) (PRAGMA synchronous=FULL) every commit is synced to
// the device before Put returns, so a checkpoint also survives a power
// loss, at the price of an fsync per super-step. Both guarantees assume a
// local file system whose fsync and locks work (not a network share).
//
// A row that does not decode (bad JSON in a column, a wrong column type)
// is reported as an error wrapping statgraph.ErrCorruptCheckpoint that names
// the file, the thread and the checkpoint id; it is never a panic.
package sqlite
