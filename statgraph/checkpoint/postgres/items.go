package postgres

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/statgraph/statgraph/statgraph/store"
)

// ItemStore is a store.Store (statgraph's long-term memory) in the table
// store_items of a Postgres schema, which may be the checkpoint store's
// own; create it with NewItemStore. It is safe for concurrent use, by any
// number of processes.
type ItemStore struct {
	pool  *pgxpool.Pool
	now   func() time.Time
	table string // the quoted schema-qualified table name
	where string // schema, database and server, for error messages
}

// NewItemStore opens the item store in schema ("" means DefaultSchema) of
// the database pool is connected to, creating the schema and table when
// they are missing. opts may set the clock (store.WithClock). The pool
// stays the caller's to close.
func NewItemStore(ctx context.Context, pool *pgxpool.Pool, schema string, opts ...store.Option) (*ItemStore, error) {
	if schema == "" {
		schema = DefaultSchema
	}
	s := &ItemStore{
		pool:  pool,
		now:   store.NewConfig(opts...).Now,
		table: quote(schema) + ".store_items",
		where: fmt.Sprintf("schema %q of %s", schema, server(pool.Config().ConnConfig)),
	}
	if err := s.create(ctx, schema); err != nil {
		return nil, fmt.Errorf("postgres: opening item store in %s: %w", s.where, err)
	}
	return s, nil
}

// create makes the schema (when missing) and the table, under an advisory
// lock so that processes starting at once do not race on the catalog. ns
// is the namespace's text form (store.NamespaceText) in the "C" collation,
// so that a prefix is a byte range of the primary key; times are Unix
// nanoseconds, expires NULL for no expiry.
func (s *ItemStore) create(ctx context.Context, schema string) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) // a no-op once committed
	h := fnv.New64a()
	h.Write([]byte("statgraph item store\x00" + schema))
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(h.Sum64())); err != nil {
		return fmt.Errorf("waiting for the schema lock: %w", err)
	}
	var exists bool
	if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", schema).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		if _, err := tx.Exec(ctx, "CREATE SCHEMA "+quote(schema)); err != nil {
			return fmt.Errorf("creating schema %s: %w; create it as a role that may, or grant CREATE on the database", quote(schema), err)
		}
	}
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS ` + s.table + ` (
			ns      text COLLATE "C" NOT NULL,
			key     text   NOT NULL,
			value   jsonb  NOT NULL,
			created bigint NOT NULL,
			updated bigint NOT NULL,
			expires bigint,
			ttl     bigint NOT NULL,
			PRIMARY KEY (ns, key))`,
		`CREATE INDEX IF NOT EXISTS store_items_expires ON ` + s.table + ` (expires) WHERE expires IS NOT NULL`,
	} {
		if _, err := tx.Exec(ctx, q); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

// wrap names the store in an error of the database.
func (s *ItemStore) wrap(op string, err error) error {
	if err == nil || errors.Is(err, store.ErrInvalid) || errors.Is(err, store.ErrNotFound) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("postgres: item store in %s: %s: %w", s.where, op, err)
}

// Put implements store.Store.
func (s *ItemStore) Put(ctx context.Context, it store.Item) error {
	r, err := store.RowOf(it, s.now())
	if err != nil {
		return err
	}
	var expires *int64 // NULL: no TTL
	if r.Expires != 0 {
		expires = &r.Expires
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO `+s.table+` AS t (ns, key, value, created, updated, expires, ttl)
		VALUES ($1, $2, $3::jsonb, $4, $4, $5, $6)
		ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, updated = excluded.updated,
			expires = excluded.expires, ttl = excluded.ttl,
			created = CASE WHEN t.expires IS NOT NULL AND t.expires <= excluded.updated
				THEN excluded.created ELSE t.created END`,
		r.NS, r.Key, r.Value, r.Now, expires, r.TTL)
	return s.wrap("put", err)
}

// scanItem reads the columns ns, key, value, created, updated, expires,
// ttl.
func scanItem(row pgx.Row) (store.Item, error) {
	var (
		ns, key, value        string
		created, updated, ttl int64
		expires               *int64
	)
	if err := row.Scan(&ns, &key, &value, &created, &updated, &expires, &ttl); err != nil {
		return store.Item{}, err
	}
	v, err := store.DecodeValue([]byte(value))
	if err != nil {
		return store.Item{}, err
	}
	var exp int64
	if expires != nil {
		exp = *expires
	}
	return store.MakeItem(ns, key, v, created, updated, exp, time.Duration(ttl)), nil
}

// Get implements store.Store.
func (s *ItemStore) Get(ctx context.Context, ns []string, key string) (store.Item, error) {
	text, err := store.NamespaceText(ns)
	if err != nil {
		return store.Item{}, err
	}
	now := s.now().UnixNano()
	it, err := scanItem(s.pool.QueryRow(ctx, s.readAndRefresh("ns = $2 AND key = $3 AND (expires IS NULL OR expires > $1)", ""),
		now, text, key))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Item{}, fmt.Errorf("%w: namespace %q, key %q", store.ErrNotFound, ns, key)
	}
	return it, s.wrap("get", err)
}

// Delete implements store.Store.
func (s *ItemStore) Delete(ctx context.Context, ns []string, key string) error {
	text, err := store.NamespaceText(ns)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `DELETE FROM `+s.table+` WHERE ns = $1 AND key = $2`, text, key)
	return s.wrap("delete", err)
}

// Search implements store.Store.
func (s *ItemStore) Search(ctx context.Context, prefix []string, q store.Query) ([]store.Item, error) {
	lo, hi, err := store.PrefixRange(prefix)
	if err != nil {
		return nil, err
	}
	now := s.now().UnixNano()
	args := []any{now}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var where strings.Builder
	where.WriteString("(expires IS NULL OR expires > $1)")
	if hi != "" {
		where.WriteString(" AND ns >= " + arg(lo) + " AND ns < " + arg(hi))
	}
	for f, v := range q.Filter {
		text, _, err := store.Canonical(f, v)
		if err != nil {
			return nil, err
		}
		where.WriteString(" AND value -> " + arg(f) + "::text = " + arg(string(text)) + "::jsonb")
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	rows, err := s.pool.Query(ctx, s.readAndRefresh(where.String(),
		"LIMIT "+arg(limit)+" OFFSET "+arg(max(q.Offset, 0))), args...)
	if err != nil {
		return nil, s.wrap("search", err)
	}
	items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Item, error) { return scanItem(r) })
	if err != nil {
		return nil, s.wrap("search", err)
	}
	return items, nil
}

// readAndRefresh is one statement that selects the live items matching
// where (with $1 the time now), in Search's order and cut by page, and
// moves the expiry of those with a TTL to now + TTL. Rows without a TTL
// are only read, so that reads do not rewrite them.
func (s *ItemStore) readAndRefresh(where, page string) string {
	return `WITH hit AS (
			SELECT ns, key, value, created, updated, expires, ttl FROM ` + s.table + ` WHERE ` + where + `
			ORDER BY updated DESC, ns, key ` + page + `),
		refreshed AS (
			UPDATE ` + s.table + ` t SET expires = $1 + t.ttl FROM hit
			WHERE t.ns = hit.ns AND t.key = hit.key AND t.ttl > 0)
		SELECT ns, key, value::text, created, updated, CASE WHEN ttl > 0 THEN $1 + ttl END, ttl
		FROM hit ORDER BY updated DESC, ns, key`
}

// ListNamespaces implements store.Store.
func (s *ItemStore) ListNamespaces(ctx context.Context, q store.NamespaceQuery) ([][]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT ns FROM `+s.table+` WHERE expires IS NULL OR expires > $1`, s.now().UnixNano())
	if err != nil {
		return nil, s.wrap("listing namespaces", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, s.wrap("listing namespaces", err)
	}
	all := make([][]string, len(names))
	for i, ns := range names {
		all[i] = store.ParseNamespace(ns)
	}
	return q.Select(all), nil
}

// Sweep implements store.Store.
func (s *ItemStore) Sweep(ctx context.Context) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM `+s.table+` WHERE expires IS NOT NULL AND expires <= $1`, s.now().UnixNano())
	if err != nil {
		return 0, s.wrap("sweep", err)
	}
	return int(tag.RowsAffected()), nil
}
