package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/statgraph/statgraph/statgraph/store"
)

// ItemStore is a store.Store (statgraph's long-term memory) in a SQLite
// file, which may be the checkpoint store's own: its rows live in a table
// of their own, store_items. Create it with OpenItemStore. It is safe for
// concurrent use, and several processes may open the same file; writes go
// through one connection, reads through a small pool, as the checkpoint
// Store does.
type ItemStore struct {
	path   string
	now    func() time.Time
	writer *sql.DB
	reader *sql.DB
}

// itemSchema creates store_items when it is missing. ns is the namespace's
// text form (store.NamespaceText), so that a prefix is a range of the
// primary key; times are Unix nanoseconds, expires NULL for no expiry.
var itemSchema = []string{
	`CREATE TABLE IF NOT EXISTS store_items (
		ns      TEXT    NOT NULL,
		key     TEXT    NOT NULL,
		value   TEXT    NOT NULL,
		created INTEGER NOT NULL,
		updated INTEGER NOT NULL,
		expires INTEGER,
		ttl     INTEGER NOT NULL,
		PRIMARY KEY (ns, key)
	) WITHOUT ROWID`,
	`CREATE INDEX IF NOT EXISTS store_items_expires ON store_items (expires) WHERE expires IS NOT NULL`,
}

// itemSchemaVersion is the version of store_items' layout this build
// writes and reads. It is kept in the one row of store_items_version, not
// in PRAGMA user_version, which belongs to the checkpoint store that may
// share the file. A file with store_items and no version row is version 1.
const itemSchemaVersion = 1

// migrate creates or checks the item store's tables in one transaction;
// a file of a newer item schema is refused and left untouched.
func (s *ItemStore) migrate(ctx context.Context) (err error) {
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
			return
		}
		err = tx.Commit()
	}()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS store_items_version (version INTEGER NOT NULL)`); err != nil {
		return err
	}
	var version sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT max(version) FROM store_items_version`).Scan(&version); err != nil {
		return err
	}
	switch {
	case version.Int64 > itemSchemaVersion:
		return fmt.Errorf("its item store schema version is %d, but this build of statgraph knows versions up to %d; open it with a newer statgraph or use another file", version.Int64, itemSchemaVersion)
	case !version.Valid:
		if _, err := tx.ExecContext(ctx, `INSERT INTO store_items_version (version) VALUES (?)`, itemSchemaVersion); err != nil {
			return err
		}
	}
	for _, q := range itemSchema {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// OpenItemStore opens the item store in the SQLite file at path, creating
// the file and its table when they do not exist. It fails, naming the file
// and both versions, when the file was written by a newer statgraph with an
// item schema this build does not know. opts may set the clock
// (store.WithClock). Close it when done.
func OpenItemStore(ctx context.Context, path string, opts ...store.Option) (*ItemStore, error) {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") || strings.Contains(path, "?") {
		return nil, fmt.Errorf("sqlite: item store path %q must be a plain file name without \"file:\" or \"?\" (use store.NewMemory for a store in memory)", path)
	}
	s := &ItemStore{path: path, now: store.NewConfig(opts...).Now}
	var err error
	s.writer, err = sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)&_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlite: opening item store %s: %w", path, err)
	}
	s.writer.SetMaxOpenConns(1)
	if err := s.migrate(ctx); err != nil {
		s.writer.Close()
		return nil, fmt.Errorf("sqlite: opening item store %s: %w", path, err)
	}
	s.reader, err = sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)&_query_only=1")
	if err != nil {
		s.writer.Close()
		return nil, fmt.Errorf("sqlite: opening item store %s: %w", path, err)
	}
	s.reader.SetMaxOpenConns(4)
	s.reader.SetMaxIdleConns(4)
	return s, nil
}

// Close closes the store's connections.
func (s *ItemStore) Close() error {
	if err := errors.Join(s.reader.Close(), s.writer.Close()); err != nil {
		return fmt.Errorf("sqlite: closing item store %s: %w", s.path, err)
	}
	return nil
}

// wrap names the store in an error of the database.
func (s *ItemStore) wrap(op string, err error) error {
	if err == nil || errors.Is(err, store.ErrInvalid) || errors.Is(err, store.ErrNotFound) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("sqlite: item store %s: %s: %w", s.path, op, err)
}

// Put implements store.Store.
func (s *ItemStore) Put(ctx context.Context, it store.Item) error {
	r, err := store.RowOf(it, s.now())
	if err != nil {
		return err
	}
	var expires any // NULL: no TTL
	if r.Expires != 0 {
		expires = r.Expires
	}
	_, err = s.writer.ExecContext(ctx, `INSERT INTO store_items (ns, key, value, created, updated, expires, ttl)
		VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6)
		ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, updated = excluded.updated,
			expires = excluded.expires, ttl = excluded.ttl,
			created = CASE WHEN store_items.expires IS NOT NULL AND store_items.expires <= excluded.updated
				THEN excluded.created ELSE store_items.created END`,
		r.NS, r.Key, r.Value, r.Now, expires, r.TTL)
	return s.wrap("put", err)
}

// Get implements store.Store.
func (s *ItemStore) Get(ctx context.Context, ns []string, key string) (store.Item, error) {
	text, err := store.NamespaceText(ns)
	if err != nil {
		return store.Item{}, err
	}
	now := s.now().UnixNano()
	row := s.reader.QueryRowContext(ctx, `SELECT ns, key, value, created, updated, expires, ttl FROM store_items
		WHERE ns = ? AND key = ? AND (expires IS NULL OR expires > ?)`, text, key, now)
	it, err := scanItem(row)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Item{}, fmt.Errorf("%w: namespace %q, key %q", store.ErrNotFound, ns, key)
	}
	if err != nil {
		return store.Item{}, s.wrap("get", err)
	}
	items := []store.Item{it}
	if err := s.refresh(ctx, now, items); err != nil {
		return store.Item{}, err
	}
	return items[0], nil
}

// scanItem reads the columns ns, key, value, created, updated, expires,
// ttl.
func scanItem(row interface{ Scan(...any) error }) (store.Item, error) {
	var (
		ns, key, value        string
		created, updated, ttl int64
		expires               sql.NullInt64
	)
	if err := row.Scan(&ns, &key, &value, &created, &updated, &expires, &ttl); err != nil {
		return store.Item{}, err
	}
	v, err := store.DecodeValue([]byte(value))
	if err != nil {
		return store.Item{}, err
	}
	return store.MakeItem(ns, key, v, created, updated, expires.Int64, time.Duration(ttl)), nil
}

// refresh moves the expiry of the items with a TTL to now + TTL, in the
// database and in items.
func (s *ItemStore) refresh(ctx context.Context, now int64, items []store.Item) error {
	var tx *sql.Tx
	for i := range items {
		it := &items[i]
		if it.TTL <= 0 {
			continue
		}
		if tx == nil {
			var err error
			if tx, err = s.writer.BeginTx(ctx, nil); err != nil {
				return s.wrap("refreshing expiry", err)
			}
			defer tx.Rollback() // a no-op once committed
		}
		ns, _ := store.NamespaceText(it.Namespace)
		exp := now + int64(it.TTL)
		if _, err := tx.ExecContext(ctx, `UPDATE store_items SET expires = ? WHERE ns = ? AND key = ? AND ttl > 0`, exp, ns, it.Key); err != nil {
			return s.wrap("refreshing expiry", err)
		}
		it.Expires = time.Unix(0, exp).UTC()
	}
	if tx != nil {
		return s.wrap("refreshing expiry", tx.Commit())
	}
	return nil
}

// Delete implements store.Store.
func (s *ItemStore) Delete(ctx context.Context, ns []string, key string) error {
	text, err := store.NamespaceText(ns)
	if err != nil {
		return err
	}
	_, err = s.writer.ExecContext(ctx, `DELETE FROM store_items WHERE ns = ? AND key = ?`, text, key)
	return s.wrap("delete", err)
}

// Search implements store.Store.
func (s *ItemStore) Search(ctx context.Context, prefix []string, q store.Query) ([]store.Item, error) {
	lo, hi, err := store.PrefixRange(prefix)
	if err != nil {
		return nil, err
	}
	now := s.now().UnixNano()
	var where strings.Builder
	args := []any{now}
	where.WriteString("(expires IS NULL OR expires > ?)")
	if hi != "" {
		where.WriteString(" AND ns >= ? AND ns < ?")
		args = append(args, lo, hi)
	}
	for f, v := range q.Filter {
		text, dec, err := store.Canonical(f, v)
		if err != nil {
			return nil, err
		}
		path := `$."` + f + `"`
		switch dec := dec.(type) {
		case nil:
			where.WriteString(" AND json_type(value, ?) = 'null'")
			args = append(args, path)
		case bool:
			where.WriteString(" AND json_type(value, ?) = ?")
			args = append(args, path, fmt.Sprint(dec))
		case string:
			where.WriteString(" AND json_type(value, ?) = 'text' AND json_extract(value, ?) = ?")
			args = append(args, path, path, dec)
		case float64:
			where.WriteString(" AND json_type(value, ?) IN ('integer', 'real') AND json_extract(value, ?) = ?")
			args = append(args, path, path, dec)
		default: // objects and arrays: compare their JSON text, keys sorted alike
			where.WriteString(" AND json_type(value, ?) IN ('object', 'array') AND json_extract(value, ?) = json(?)")
			args = append(args, path, path, string(text))
		}
	}
	limit, offset := q.Limit, max(q.Offset, 0)
	if limit <= 0 {
		limit = 10
	}
	args = append(args, limit, offset)
	rows, err := s.reader.QueryContext(ctx, `SELECT ns, key, value, created, updated, expires, ttl FROM store_items
		WHERE `+where.String()+` ORDER BY updated DESC, ns, key LIMIT ? OFFSET ?`, args...)
	if err != nil {
		return nil, s.wrap("search", err)
	}
	defer rows.Close()
	items := []store.Item{}
	for rows.Next() {
		it, err := scanItem(rows)
		if err != nil {
			return nil, s.wrap("search", err)
		}
		items = append(items, it)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("search", err)
	}
	return items, s.refresh(ctx, now, items)
}

// ListNamespaces implements store.Store.
func (s *ItemStore) ListNamespaces(ctx context.Context, q store.NamespaceQuery) ([][]string, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT DISTINCT ns FROM store_items WHERE expires IS NULL OR expires > ?`, s.now().UnixNano())
	if err != nil {
		return nil, s.wrap("listing namespaces", err)
	}
	defer rows.Close()
	var all [][]string
	for rows.Next() {
		var ns string
		if err := rows.Scan(&ns); err != nil {
			return nil, s.wrap("listing namespaces", err)
		}
		all = append(all, store.ParseNamespace(ns))
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("listing namespaces", err)
	}
	return q.Select(all), nil
}

// Sweep implements store.Store.
func (s *ItemStore) Sweep(ctx context.Context) (int, error) {
	res, err := s.writer.ExecContext(ctx, `DELETE FROM store_items WHERE expires IS NOT NULL AND expires <= ?`, s.now().UnixNano())
	if err != nil {
		return 0, s.wrap("sweep", err)
	}
	n, err := res.RowsAffected()
	return int(n), s.wrap("sweep", err)
}
