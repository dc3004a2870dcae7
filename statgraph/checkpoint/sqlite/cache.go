package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/statgraph/statgraph/statgraph/cache"
)

// Cache is a cache.Cache kept in a SQLite file, for statgraph.WithCache: its
// entries outlive the process, so a graph compiled again, in another
// process, finds the results its nodes cached. Create it with OpenCache;
// it may share the file of a checkpoint Store (its table is its own). It
// is safe for concurrent use, and several processes may open the same
// file. Expired entries are not returned and are deleted by the next Set;
// the cache is otherwise unbounded: Clear it, or give entries a TTL.
type Cache struct {
	db                   *sql.DB // one connection: SQLite writes one at a time anyway
	get, set, purge, del *sql.Stmt
	now                  func() time.Time // the clock expiries are read on; tests replace it
}

var _ cache.Cache = (*Cache)(nil)

// cacheSchema creates the cache's table in any file, beside a checkpoint
// store's tables or alone; it does not take part in the store's schema
// versions. expires is in Unix nanoseconds, NULL for never.
var cacheSchema = []string{
	`CREATE TABLE IF NOT EXISTS node_cache (
		ns      TEXT NOT NULL,
		key     TEXT NOT NULL,
		value   BLOB NOT NULL,
		expires INTEGER,
		PRIMARY KEY (ns, key)
	) WITHOUT ROWID`,
	`CREATE INDEX IF NOT EXISTS node_cache_expires ON node_cache (expires) WHERE expires IS NOT NULL`,
}

// OpenCache opens the node cache in the SQLite file at path, creating the
// file and the cache's table when they do not exist. path is as for Open;
// opts are Open's (Durability, BusyTimeout). Close the cache when done.
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
	c := &Cache{db: db, now: time.Now}
	if err := c.prepare(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("sqlite: opening cache %s: %w", path, err)
	}
	return c, nil
}

func (c *Cache) prepare(ctx context.Context) error {
	for _, q := range cacheSchema {
		if _, err := c.db.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	for _, p := range []struct {
		st **sql.Stmt
		q  string
	}{
		{&c.get, `SELECT value, expires FROM node_cache WHERE ns = ? AND key = ?`},
		{&c.set, `INSERT OR REPLACE INTO node_cache (ns, key, value, expires) VALUES (?, ?, ?, ?)`},
		{&c.purge, `DELETE FROM node_cache WHERE expires <= ?`},
		{&c.del, `DELETE FROM node_cache WHERE ns = ?`},
	} {
		st, err := c.db.PrepareContext(ctx, p.q)
		if err != nil {
			return err
		}
		*p.st = st
	}
	return nil
}

// Get returns the fresh value under ns and key.
func (c *Cache) Get(ctx context.Context, ns, key string) ([]byte, bool, error) {
	var value []byte
	var expires sql.NullInt64
	switch err := c.get.QueryRowContext(ctx, ns, key).Scan(&value, &expires); {
	case errors.Is(err, sql.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("sqlite: cache get %s: %w", ns, err)
	}
	if expires.Valid && c.now().UnixNano() >= expires.Int64 {
		return nil, false, nil
	}
	return value, true, nil
}

// Set stores value under ns and key for ttl (ttl <= 0: no expiry) and
// deletes the entries that expired.
func (c *Cache) Set(ctx context.Context, ns, key string, value []byte, ttl time.Duration) error {
	now := c.now()
	var expires any
	if ttl > 0 {
		expires = now.Add(ttl).UnixNano()
	}
	if _, err := c.set.ExecContext(ctx, ns, key, value, expires); err != nil {
		return fmt.Errorf("sqlite: cache set %s: %w", ns, err)
	}
	if _, err := c.purge.ExecContext(ctx, now.UnixNano()); err != nil {
		return fmt.Errorf("sqlite: cache purge: %w", err)
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
	for _, st := range []*sql.Stmt{c.get, c.set, c.purge, c.del} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	errs = append(errs, c.db.Close())
	return errors.Join(errs...)
}
