package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/statgraph/statgraph/statgraph/cache"
)

// Cache is a cache.Cache kept in a SQLite file, for statgraph.WithCache: its
// entries outlive the process, so a graph compiled again, in another
// process, finds the results its nodes cached. Create it with OpenCache;
// it may share the file of a checkpoint Store (its table is its own). It
// is safe for concurrent use, and several processes may open the same
// file.
//
// Like cache.Memory it is bounded (CacheEntries, CacheBytes; by default
// cache.DefaultEntries entries): a Set past a bound deletes the least
// recently used entries until the bounds hold, and a Get that hits marks
// its entry used, so a Get is a write. Recency is kept in the file, so it
// carries across processes and opens; each process's bounds apply to its
// own Sets. Expired entries are not returned and are deleted by the next
// Set. Each Set reads the whole table to find what to evict (a few
// milliseconds at 4,096 entries).
type Cache struct {
	db                   *sql.DB // one connection: SQLite writes one at a time anyway
	get, set, purge, del *sql.Stmt
	drop, evict          *sql.Stmt
	maxEntries           int64            // math.MaxInt64: no bound
	maxBytes             int64            // math.MaxInt64: no bound
	now                  func() time.Time // the clock expiries are read on; tests replace it
}

var _ cache.Cache = (*Cache)(nil)

// cacheSchema creates the cache's table in any file, beside a checkpoint
// store's tables or alone; it does not take part in the store's schema
// versions. expires is in Unix nanoseconds, NULL for never; used orders
// the entries by their last Get or Set (higher is more recent); size is
// the bytes of ns, key and value together.
var cacheSchema = []string{
	`CREATE TABLE IF NOT EXISTS node_cache (
		ns      TEXT NOT NULL,
		key     TEXT NOT NULL,
		value   BLOB NOT NULL,
		expires INTEGER,
		used    INTEGER NOT NULL,
		size    INTEGER NOT NULL,
		PRIMARY KEY (ns, key)
	) WITHOUT ROWID`,
	`CREATE INDEX IF NOT EXISTS node_cache_expires ON node_cache (expires) WHERE expires IS NOT NULL`,
	`CREATE INDEX IF NOT EXISTS node_cache_used ON node_cache (used)`,
}

// OpenCache opens the node cache in the SQLite file at path, creating the
// file and the cache's table when they do not exist. path is as for Open;
// opts are Open's (Durability, BusyTimeout) and the cache's bounds
// (CacheEntries, CacheBytes). The table of an older statgraph's cache,
// which kept no recency, is emptied (a cache loses nothing it cannot
// recompute). Close the cache when done.
func OpenCache(ctx context.Context, path string, opts ...Option) (*Cache, error) {
	cfg := config{busyTimeout: 5 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") || strings.Contains(path, "?") {
		return nil, fmt.Errorf("sqlite: cache path %q must be a plain file name without \"file:\" or \"?\" (for a cache in memory use cache.Memory)", path)
	}
	syncMode := "NORMAL"
	if cfg.mode == Full {
		syncMode = "FULL"
	}
	db, err := sql.Open("sqlite", fmt.Sprintf("%s?_pragma=busy_timeout(%d)&_journal_mode=WAL&_synchronous=%s&_txlock=immediate", path, cfg.busyTimeout.Milliseconds(), syncMode))
	if err != nil {
		return nil, fmt.Errorf("sqlite: opening cache %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	c := &Cache{db: db, now: time.Now, maxEntries: math.MaxInt64, maxBytes: math.MaxInt64}
	switch {
	case cfg.cacheEntries == 0:
		c.maxEntries = cache.DefaultEntries
	case cfg.cacheEntries > 0:
		c.maxEntries = int64(cfg.cacheEntries)
	}
	if cfg.cacheBytes > 0 {
		c.maxBytes = cfg.cacheBytes
	}
	if err := c.prepare(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("sqlite: opening cache %s: %w", path, err)
	}
	return c, nil
}

func (c *Cache) prepare(ctx context.Context) error {
	var old int
	if err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'node_cache'
		AND NOT EXISTS (SELECT 1 FROM pragma_table_info('node_cache') WHERE name = 'used')`).Scan(&old); err != nil {
		return err
	}
	if old > 0 {
		if _, err := c.db.ExecContext(ctx, `DROP TABLE IF EXISTS node_cache`); err != nil {
			return err
		}
	}
	for _, q := range cacheSchema {
		if _, err := c.db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	const next = `(SELECT coalesce(max(used), 0) + 1 FROM node_cache)`
	for _, p := range []struct {
		st **sql.Stmt
		q  string
	}{
		{&c.get, `UPDATE node_cache SET used = ` + next + ` WHERE ns = ? AND key = ? AND (expires IS NULL OR expires > ?) RETURNING value`},
		{&c.set, `INSERT OR REPLACE INTO node_cache (ns, key, value, expires, used, size) VALUES (?, ?, ?, ?, ` + next + `, ?)`},
		{&c.purge, `DELETE FROM node_cache WHERE expires <= ?`},
		{&c.del, `DELETE FROM node_cache WHERE ns = ?`},
		{&c.drop, `DELETE FROM node_cache WHERE ns = ? AND key = ?`},
		// The entries past the bounds, newest first: those after the
		// first ?1 entries, or after the first ?2 bytes.
		{&c.evict, `DELETE FROM node_cache WHERE (ns, key) IN (
			SELECT ns, key FROM (
				SELECT ns, key, row_number() OVER w AS n, sum(size) OVER w AS total
				FROM node_cache WINDOW w AS (ORDER BY used DESC ROWS UNBOUNDED PRECEDING))
			WHERE n > ? OR total > ?)`},
	} {
		st, err := c.db.PrepareContext(ctx, p.q)
		if err != nil {
			return err
		}
		*p.st = st
	}
	return nil
}

// Get returns the fresh value under ns and key and marks it used.
func (c *Cache) Get(ctx context.Context, ns, key string) ([]byte, bool, error) {
	var value []byte
	switch err := c.get.QueryRowContext(ctx, ns, key, c.now().UnixNano()).Scan(&value); {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("sqlite: cache get %s: %w", ns, err)
	}
	return value, true, nil
}

// Set stores value under ns and key for ttl (ttl <= 0: no expiry), deletes
// the entries that expired, then the least recently used ones until the
// bounds hold; all in one transaction.
func (c *Cache) Set(ctx context.Context, ns, key string, value []byte, ttl time.Duration) (err error) {
	now := c.now()
	var expires any
	if ttl > 0 {
		expires = now.Add(ttl).UnixNano()
	}
	size := int64(len(ns) + len(key) + len(value))
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: cache set %s: %w", ns, err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
			return
		}
		if cerr := tx.Commit(); cerr != nil {
			err = fmt.Errorf("sqlite: cache set %s: %w", ns, cerr)
		}
	}()
	if size > c.maxBytes {
		// Not kept; the value it replaces is stale now.
		if _, err := tx.StmtContext(ctx, c.drop).ExecContext(ctx, ns, key); err != nil {
			return fmt.Errorf("sqlite: cache set %s: %w", ns, err)
		}
		return nil
	}
	if _, err := tx.StmtContext(ctx, c.purge).ExecContext(ctx, now.UnixNano()); err != nil {
		return fmt.Errorf("sqlite: cache purge: %w", err)
	}
	if _, err := tx.StmtContext(ctx, c.set).ExecContext(ctx, ns, key, value, expires, size); err != nil {
		return fmt.Errorf("sqlite: cache set %s: %w", ns, err)
	}
	if c.maxEntries == math.MaxInt64 && c.maxBytes == math.MaxInt64 {
		return nil
	}
	if _, err := tx.StmtContext(ctx, c.evict).ExecContext(ctx, c.maxEntries, c.maxBytes); err != nil {
		return fmt.Errorf("sqlite: cache evict: %w", err)
	}
	return nil
}

// Clear deletes the entries of the namespaces ns, or every entry.
func (c *Cache) Clear(ctx context.Context, ns ...string) error {
	if len(ns) == 0 {
		if _, err := c.db.ExecContext(ctx, `DELETE FROM node_cache`); err != nil {
			return fmt.Errorf("sqlite: cache clear: %w", err)
		}
		return nil
	}
	for _, n := range ns {
		if _, err := c.del.ExecContext(ctx, n); err != nil {
			return fmt.Errorf("sqlite: cache clear %s: %w", n, err)
		}
	}
	return nil
}

// Close closes the cache's statements and database.
func (c *Cache) Close() error {
	var errs []error
	for _, st := range []*sql.Stmt{c.get, c.set, c.purge, c.del, c.drop, c.evict} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	errs = append(errs, c.db.Close())
	return errors.Join(errs...)
}
