package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/internal/rowenc"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// Store is a statgraph.Checkpointer backed by one SQLite file; create it with
// Open (the zero Store is not usable). It is safe for concurrent use by many
// goroutines, and several processes may open the same file. Within a Store,
// writes go through a single connection, so they are serialised in Go and
// never contend with each other for the SQLite write lock, while reads use
// a small pool of their own.
type Store struct {
	path   string
	writer *sql.DB // one connection: Put and Delete
	reader *sql.DB // query-only connections: Get and Range

	// Prepared statements: the first six on writer, the others on reader.
	put, addThread, findThread, del, delBefore, putWrites, get, list, rng *sql.Stmt

	tids sync.Map // thread name -> int64 thread number; never changes once set
}

// Mode says how far a commit is pushed to disk before Put returns.
type Mode int

const (
	// Normal is PRAGMA synchronous=NORMAL, the default. In WAL mode a
	// committed checkpoint survives a crash of the process; a power loss or
	// operating-system crash may lose the last few commits but never
	// corrupts the database.
	Normal Mode = iota
	// Full is PRAGMA synchronous=FULL: every commit is synced to the device,
	// so a committed checkpoint also survives a power loss. Each Put then
	// costs at least one fsync.
	Full
)

// Option is an optional setting of Open.
type Option func(*config)

type config struct {
	mode         Mode
	busyTimeout  time.Duration
	readers      int   // connections of the read pool
	cacheEntries int   // OpenCache's bound on entries (CacheEntries)
	cacheBytes   int64 // OpenCache's bound on bytes (CacheBytes)
}

// CacheEntries bounds the entries of a Cache opened with OpenCache, as
// cache.Memory's MaxEntries does: zero (the default) means
// cache.DefaultEntries, a negative n no bound. Open ignores it.
func CacheEntries(n int) Option { return func(c *config) { c.cacheEntries = n } }

// CacheBytes bounds the bytes of a Cache's namespaces, keys and values
// together, as cache.Memory's MaxBytes does: zero or less (the default)
// means no bound, and a value larger than the bound on its own is not
// kept. Open ignores it.
func CacheBytes(n int64) Option { return func(c *config) { c.cacheBytes = n } }

// Durability sets how far a commit is pushed to disk; the default is Normal.
func Durability(m Mode) Option { return func(c *config) { c.mode = m } }

// BusyTimeout sets how long an operation waits for a lock held by another
// process using the same file before it fails with SQLITE_BUSY; the default
// is 5 s. Zero or less keeps the default.
func BusyTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.busyTimeout = d
		}
	}
}

// Open opens the checkpoint store in the SQLite file at path, creating the
// file and its schema when they do not exist and migrating an older schema.
// It fails, naming the file and both versions, when the file was written by
// a newer statgraph with a schema this build does not know. path must name a
// file: ":memory:" is refused because each connection would see its own
// database. Close the store when done.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	cfg := config{busyTimeout: 5 * time.Second, readers: 4}
	for _, o := range opts {
		o(&cfg)
	}
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") || strings.Contains(path, "?") {
		return nil, fmt.Errorf("sqlite: checkpoint store path %q must be a plain file name without \"file:\" or \"?\" (an in-memory database is not shared between connections; use statgraph's memory checkpointer instead)", path)
	}
	syncMode := "NORMAL"
	if cfg.mode == Full {
		syncMode = "FULL"
	}
	busy := fmt.Sprintf("_pragma=busy_timeout(%d)", cfg.busyTimeout.Milliseconds())
	s := &Store{path: path}
	var err error
	// BEGIN IMMEDIATE takes the write lock at the start of a transaction,
	// so a transaction never fails to upgrade a read lock half way.
	s.writer, err = sql.Open("sqlite", path+"?"+busy+"&_journal_mode=WAL&_synchronous="+syncMode+"&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlite: opening checkpoint store %s: %w", path, err)
	}
	s.writer.SetMaxOpenConns(1)
	s.writer.SetMaxIdleConns(1)
	if err := migrate(ctx, s.writer); err != nil {
		s.writer.Close()
		return nil, fmt.Errorf("sqlite: opening checkpoint store %s: %w", path, err)
	}
	// The file is in WAL mode now; readers do not block the writer.
	s.reader, err = sql.Open("sqlite", path+"?"+busy+"&_query_only=1")
	if err != nil {
		s.writer.Close()
		return nil, fmt.Errorf("sqlite: opening checkpoint store %s: %w", path, err)
	}
	s.reader.SetMaxOpenConns(cfg.readers)
	s.reader.SetMaxIdleConns(cfg.readers)
	if err := s.prepare(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: opening checkpoint store %s: %w", path, err)
	}
	return s, nil
}

// selected is the column list of queries that join threads t and
// checkpoints c, in the order of columns.
var selected = "c." + strings.ReplaceAll(columns, ", ", ", c.")

// threadRange restricts c to the checkpoints of thread t.
const threadRange = "c.key BETWEEN t.tid << 32 AND (t.tid << 32) | 4294967295"

func (s *Store) prepare(ctx context.Context) error {
	stmts := []struct {
		db    *sql.DB
		dst   **sql.Stmt
		query string
	}{
		{s.writer, &s.put, "INSERT INTO checkpoints (" + columns + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"},
		{s.writer, &s.addThread, "INSERT INTO threads (name) VALUES (?) ON CONFLICT (name) DO NOTHING"},
		{s.writer, &s.findThread, "SELECT tid FROM threads WHERE name = ?"},
		{s.writer, &s.del, "DELETE FROM checkpoints WHERE key BETWEEN (SELECT tid FROM threads WHERE name = ?1) << 32 AND ((SELECT tid FROM threads WHERE name = ?1) << 32) | 4294967295"},
		{s.writer, &s.delBefore, "DELETE FROM checkpoints WHERE key BETWEEN (SELECT tid FROM threads WHERE name = ?1) << 32 AND ((SELECT tid FROM threads WHERE name = ?1) << 32) | (?2 - 1)"},
		{s.writer, &s.putWrites, "UPDATE checkpoints SET pending = " + rowenc.AppendSQL("?3") + " WHERE key = ((SELECT tid FROM threads WHERE name = ?1) << 32) | ?2"},
		{s.reader, &s.get, "SELECT " + selected + " FROM threads t, checkpoints c WHERE t.name = ? AND c.key = (t.tid << 32) | ?"},
		{s.reader, &s.list, "SELECT " + selected + " FROM threads t, checkpoints c WHERE t.name = ? AND " + threadRange + " ORDER BY c.key DESC LIMIT ?"},
		{s.reader, &s.rng, "SELECT " + selected + " FROM threads t, checkpoints c WHERE t.name = ? AND c.key BETWEEN (t.tid << 32) | ? AND (t.tid << 32) | ? ORDER BY c.key DESC LIMIT ?"},
	}
	for _, st := range stmts {
		stmt, err := st.db.PrepareContext(ctx, st.query)
		if err != nil {
			return err
		}
		*st.dst = stmt
	}
	return nil
}

// Close closes the store's statements and connections. Calls made after
// Close fail. Close is not safe to call concurrently with other methods.
func (s *Store) Close() error {
	var errs []error
	for _, st := range []*sql.Stmt{s.put, s.addThread, s.findThread, s.del, s.delBefore, s.putWrites, s.get, s.list, s.rng} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	for _, db := range []*sql.DB{s.reader, s.writer} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: closing checkpoint store %s: %w", s.path, err)
	}
	return nil
}

// Put stores cp in one transaction and returns once it is committed, which
// makes it as durable as the store's Mode says. The common case, a thread
// that already has a number, is a single INSERT. cp.ID must be in
// 1..4294967295. Storing a second checkpoint with the thread and ID of an
// existing one fails. cp.Value and the Value of its pending writes are not
// stored.
func (s *Store) Put(ctx context.Context, cp *statgraph.Checkpoint) error {
	if cp.ID < 1 || cp.ID > maxID {
		return fmt.Errorf("sqlite: checkpoint id %d of thread %q is outside 1..%d", cp.ID, cp.Thread, int64(maxID))
	}
	tid, known := s.tids.Load(cp.Thread)
	if !known {
		tid = int64(0) // replaced in putNewThread
	}
	args, err := rowArgs(tid.(int64), cp)
	if err != nil {
		return fmt.Errorf("sqlite: encoding checkpoint %d of thread %q: %w", cp.ID, cp.Thread, err)
	}
	if known {
		_, err = s.put.ExecContext(ctx, args...)
	} else {
		err = s.putNewThread(ctx, cp, args)
	}
	if err != nil {
		var coded interface{ Code() int }
		if errors.As(err, &coded) && coded.Code() == sqliteConstraintPrimaryKey {
			return fmt.Errorf("sqlite: checkpoint %d of thread %q already exists in %s; checkpoint ids must grow within a thread", cp.ID, cp.Thread, s.path)
		}
		return fmt.Errorf("sqlite: storing checkpoint %d of thread %q in %s: %w", cp.ID, cp.Thread, s.path, err)
	}
	return nil
}

// putNewThread stores the checkpoint of a thread whose number is not cached
// yet: it finds or adds the thread and inserts the row in one transaction.
func (s *Store) putNewThread(ctx context.Context, cp *statgraph.Checkpoint, args []any) error {
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() // a no-op once committed
	if _, err := tx.StmtContext(ctx, s.addThread).ExecContext(ctx, cp.Thread); err != nil {
		return err
	}
	var tid int64
	if err := tx.StmtContext(ctx, s.findThread).QueryRowContext(ctx, cp.Thread).Scan(&tid); err != nil {
		return err
	}
	args[colKey] = rowKey(tid, cp.ID)
	if _, err := tx.StmtContext(ctx, s.put).ExecContext(ctx, args...); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.tids.Store(cp.Thread, tid)
	return nil
}

// sqliteConstraintPrimaryKey is SQLITE_CONSTRAINT_PRIMARYKEY, the extended
// result code of a duplicate primary key.
const sqliteConstraintPrimaryKey = 1555

// Get returns checkpoint id of thread, or its latest checkpoint when id is
// 0. It returns an error wrapping statgraph.ErrNoCheckpoint when there is
// none, and one wrapping statgraph.ErrCorruptCheckpoint when the row does
// not decode.
func (s *Store) Get(ctx context.Context, thread string, id int64) (*statgraph.Checkpoint, error) {
	var rows *sql.Rows
	var err error
	switch {
	case id == 0:
		rows, err = s.list.QueryContext(ctx, thread, 1)
	case id < 0 || id > maxID:
		return nil, fmt.Errorf("sqlite: thread %q has no checkpoint %d in %s: %w", thread, id, s.path, statgraph.ErrNoCheckpoint)
	default:
		rows, err = s.get.QueryContext(ctx, thread, id)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: reading checkpoint %d of thread %q from %s: %w", id, thread, s.path, err)
	}
	cps, err := s.scan(thread, rows)
	if err != nil {
		return nil, err
	}
	if len(cps) == 0 {
		if id == 0 {
			return nil, fmt.Errorf("sqlite: thread %q has no checkpoints in %s: %w", thread, s.path, statgraph.ErrNoCheckpoint)
		}
		return nil, fmt.Errorf("sqlite: thread %q has no checkpoint %d in %s: %w", thread, id, s.path, statgraph.ErrNoCheckpoint)
	}
	return cps[0], nil
}

// Range returns the checkpoints of thread with IDs in [from, to] (to <= 0:
// no upper bound), newest first, the newest limit of them when limit > 0,
// in one range scan of the thread's keys. An empty range gives an empty
// list and no error; a row that does not decode gives an error wrapping
// statgraph.ErrCorruptCheckpoint.
func (s *Store) Range(ctx context.Context, thread string, from, to int64, limit int) ([]*statgraph.Checkpoint, error) {
	from = max(from, 1)
	if to <= 0 || to > maxID {
		to = maxID
	}
	if limit <= 0 {
		limit = -1 // no limit in SQLite
	}
	if from > to {
		return nil, nil
	}
	rows, err := s.rng.QueryContext(ctx, thread, from, to, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: reading checkpoints %d..%d of thread %q from %s: %w", from, to, thread, s.path, err)
	}
	return s.scan(thread, rows)
}

// scan reads and closes rows.
func (s *Store) scan(thread string, rows *sql.Rows) ([]*statgraph.Checkpoint, error) {
	defer rows.Close()
	var (
		cps   []*statgraph.Checkpoint
		block []statgraph.Checkpoint // checkpoints are allocated in blocks
		vals  [numColumns]any
		dst   [numColumns]any
		dec   rowenc.Decoder
		text  [len(jsonColumns)]jsonText
		mem   arena
		blobs [len(blobColumns)]blob
	)
	for i := range vals {
		dst[i] = &vals[i]
	}
	for k, col := range jsonColumns {
		dst[col] = &text[k]
	}
	for k, col := range blobColumns {
		blobs[k].arena = &mem
		dst[col] = &blobs[k]
	}
	for rows.Next() {
		if err := rows.Scan(dst[:]...); err != nil {
			return nil, fmt.Errorf("sqlite: reading checkpoints of thread %q from %s: %w", thread, s.path, err)
		}
		for k, col := range jsonColumns {
			vals[col] = &text[k]
		}
		for k, col := range blobColumns {
			vals[col] = &blobs[k]
		}
		if len(block) == 0 { // 1, 2, 4, ... 64 at a time: one row, one allocation
			block = make([]statgraph.Checkpoint, min(max(2*len(cps), 1), 64))
		}
		cp := &block[0]
		block = block[1:]
		if err := s.decodeRow(thread, &vals, &dec, cp); err != nil {
			return nil, err
		}
		cps = append(cps, cp)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: reading checkpoints of thread %q from %s: %w", thread, s.path, err)
	}
	return cps, nil
}

// Delete removes the checkpoints of thread with IDs below before, or every
// checkpoint of thread when before <= 0, in one statement (one
// transaction), and returns how many it removed. Deleting from a thread
// without checkpoints is not an error. The thread keeps its number, so a
// Put racing with a whole-thread Delete either lands before the delete (and
// is deleted) or after it (and starts the thread again). The pages the rows
// held are reused by later writes; Vacuum gives them back to the file
// system.
func (s *Store) Delete(ctx context.Context, thread string, before int64) (int, error) {
	var res sql.Result
	var err error
	switch {
	case before <= 0:
		if res, err = s.del.ExecContext(ctx, thread); err != nil {
			return 0, fmt.Errorf("sqlite: deleting thread %q from %s: %w", thread, s.path, err)
		}
	case before == 1:
		return 0, nil
	default:
		if res, err = s.delBefore.ExecContext(ctx, thread, min(before, maxID+1)); err != nil {
			return 0, fmt.Errorf("sqlite: deleting checkpoints before %d of thread %q from %s: %w", before, thread, s.path, err)
		}
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// PutWrites appends writes to the pending writes of checkpoint id of
// thread in one statement, durable when it returns as Put is. It rewrites
// the checkpoint's row, so a step of n tasks writes O(n) rows. Safe for
// concurrent use (writes are serialised on the store's one writer
// connection). A checkpoint that does not exist gives an error wrapping
// statgraph.ErrNoCheckpoint.
func (s *Store) PutWrites(ctx context.Context, thread string, id int64, writes []statgraph.PendingWrite) error {
	text, err := rowenc.EncodeWrites(writes)
	if err != nil || text == "" {
		return err
	}
	if id < 1 || id > maxID {
		return fmt.Errorf("sqlite: thread %q has no checkpoint %d in %s: %w", thread, id, s.path, statgraph.ErrNoCheckpoint)
	}
	res, err := s.putWrites.ExecContext(ctx, thread, id, text)
	if err != nil {
		return fmt.Errorf("sqlite: saving pending writes of checkpoint %d of thread %q in %s: %w", id, thread, s.path, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("sqlite: thread %q has no checkpoint %d in %s: %w", thread, id, s.path, statgraph.ErrNoCheckpoint)
	}
	return nil
}

// Vacuum rewrites the file without the pages freed by deletions (VACUUM),
// so their bytes go back to the file system, and returns how many bytes
// the file (with its write-ahead log) shrank by. It needs as much free disk
// space as the file's size and blocks the store's writes while it runs;
// call it when no run is writing, e.g. from a clean-up command.
func (s *Store) Vacuum(ctx context.Context) (int64, error) {
	before := s.fileBytes()
	for _, q := range []string{"VACUUM", "PRAGMA wal_checkpoint(TRUNCATE)"} {
		if _, err := s.writer.ExecContext(ctx, q); err != nil {
			return 0, fmt.Errorf("sqlite: %s of %s: %w; make sure no other process is using the file and there is free disk space for a copy of it", q, s.path, err)
		}
	}
	return before - s.fileBytes(), nil
}

// fileBytes is the size of the database file and its write-ahead log.
func (s *Store) fileBytes() int64 {
	var n int64
	for _, p := range []string{s.path, s.path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

var _ statgraph.Checkpointer = (*Store)(nil)
