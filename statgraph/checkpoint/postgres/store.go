package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/internal/rowenc"
)

// DefaultSchema is the Postgres schema the store's tables live in unless
// Schema says otherwise.
const DefaultSchema = "statgraph"

// Store is a statgraph.Checkpointer backed by tables in one schema of a
// PostgreSQL database; create it with Open or New (the zero Store is not
// usable). It is safe for concurrent use by many goroutines, and any number
// of processes may use the same schema at once: every Put is one committed
// transaction, and Postgres orders concurrent writers.
type Store struct {
	pool     *pgxpool.Pool
	ownsPool bool   // Open created pool, so Close closes it
	where    string // schema, database and server, for error messages

	// SQL of the store's statements, with the schema's name filled in.
	put, addThread, findThread, del, putWrites, selectRows string

	tids sync.Map // thread name -> int64 thread number; never changes once set
}

// Option is an optional setting of Open and New.
type Option func(*config)

type config struct {
	schema string
}

// Schema sets the Postgres schema that holds the store's tables (created
// when missing); the default is DefaultSchema. Stores in different schemas
// of one database are independent, so the tables can live beside another
// program's, such as River's queue.
func Schema(name string) Option { return func(c *config) { c.schema = name } }

// Open connects to the database that connString names (a URL such as
// postgres://user:password@host:5432/db?sslmode=disable or a key=value
// string, see pgxpool.ParseConfig), creates the store's schema and tables
// when they do not exist and migrates older ones. It fails, naming the
// schema and both versions, when the tables were written by a newer
// statgraph whose schema this build does not know; they are then left as
// they were. Several processes may Open the same database at once: their
// migrations run one after the other. Close the store when done.
func Open(ctx context.Context, connString string, opts ...Option) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		// pgx's message does not repeat the string, which may hold a password.
		return nil, fmt.Errorf("postgres: opening checkpoint store: the connection string does not parse: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: opening checkpoint store on %s: %w", server(cfg.ConnConfig), err)
	}
	s, err := New(ctx, pool, opts...)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.ownsPool = true
	return s, nil
}

// New is Open on a pool the caller made and keeps: Close leaves it open.
// It migrates the schema as Open does.
func New(ctx context.Context, pool *pgxpool.Pool, opts ...Option) (*Store, error) {
	c := config{schema: DefaultSchema}
	for _, o := range opts {
		o(&c)
	}
	where := fmt.Sprintf("schema %q of %s", c.schema, server(pool.Config().ConnConfig))
	if c.schema == "" {
		return nil, fmt.Errorf("postgres: opening checkpoint store on %s: %w", server(pool.Config().ConnConfig), errNoSchema)
	}
	if err := migrate(ctx, pool, c.schema); err != nil {
		return nil, fmt.Errorf("postgres: opening checkpoint store in %s: %w", where, err)
	}
	q := quote(c.schema)
	return &Store{
		pool:       pool,
		where:      where,
		put:        "INSERT INTO " + q + ".checkpoints (" + columns + ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
		addThread:  "INSERT INTO " + q + ".threads (name) VALUES ($1) ON CONFLICT (name) DO NOTHING",
		findThread: "SELECT tid FROM " + q + ".threads WHERE name = $1",
		del:        "DELETE FROM " + q + ".checkpoints WHERE tid = (SELECT tid FROM " + q + ".threads WHERE name = $1)",
		putWrites: "UPDATE " + q + ".checkpoints SET pending = " + rowenc.AppendSQL("$3::text") +
			" WHERE tid = (SELECT tid FROM " + q + ".threads WHERE name = $1) AND id = $2",
		selectRows: "SELECT c." + strings.ReplaceAll(columns[len("tid, "):], ", ", ", c.") +
			" FROM " + q + ".threads t JOIN " + q + ".checkpoints c ON c.tid = t.tid WHERE t.name = $1",
	}, nil
}

// server names the database and server of cfg, without credentials.
func server(cfg *pgx.ConnConfig) string {
	return fmt.Sprintf("database %q on %s:%d", cfg.Database, cfg.Host, cfg.Port)
}

// Close closes the store's connections if Open made them; a store made by
// New leaves its pool to the caller. Calls made after Close fail. Close is
// not safe to call concurrently with other methods.
func (s *Store) Close() {
	if s.ownsPool {
		s.pool.Close()
	}
}

// Put stores cp in one transaction and returns once Postgres has committed
// it, which with the server's default synchronous_commit=on means it is on
// the server's disk (and on synchronous replicas, if configured). The
// common case, a thread whose number the store knows, is a single INSERT.
// cp.ID must be at least 1. Storing a second checkpoint with the thread and
// ID of an existing one fails. cp.Value and the Value of its pending writes
// are not stored. The thread's name must be valid UTF-8 without NUL bytes,
// as Postgres text requires.
func (s *Store) Put(ctx context.Context, cp *statgraph.Checkpoint) error {
	if cp.ID < 1 {
		return fmt.Errorf("postgres: checkpoint id %d of thread %q is not positive", cp.ID, cp.Thread)
	}
	tid, known := s.tids.Load(cp.Thread)
	if !known {
		tid = int64(0) // replaced in putNewThread
	}
	args, err := rowArgs(tid.(int64), cp)
	if err != nil {
		return fmt.Errorf("postgres: encoding checkpoint %d of thread %q: %w", cp.ID, cp.Thread, err)
	}
	if known {
		_, err = s.pool.Exec(ctx, s.put, args...)
	} else {
		err = s.putNewThread(ctx, cp, args)
	}
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == uniqueViolation && pgErr.TableName == "checkpoints" {
			return fmt.Errorf("postgres: checkpoint %d of thread %q already exists in %s; checkpoint ids must grow within a thread", cp.ID, cp.Thread, s.where)
		}
		return fmt.Errorf("postgres: storing checkpoint %d of thread %q in %s: %w", cp.ID, cp.Thread, s.where, err)
	}
	return nil
}

// uniqueViolation is the SQLSTATE of a duplicate key.
const uniqueViolation = "23505"

// putNewThread stores the checkpoint of a thread whose number is not cached
// yet: it finds or adds the thread and inserts the row in one transaction.
// Two processes adding the same thread at once both end up with its one
// number: the second INSERT waits for the first to commit, does nothing,
// and its SELECT then sees the committed row.
func (s *Store) putNewThread(ctx context.Context, cp *statgraph.Checkpoint, args []any) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) // a no-op once committed
	if _, err := tx.Exec(ctx, s.addThread, cp.Thread); err != nil {
		return err
	}
	var tid int64
	if err := tx.QueryRow(ctx, s.findThread, cp.Thread).Scan(&tid); err != nil {
		return err
	}
	args[colTid] = tid
	if _, err := tx.Exec(ctx, s.put, args...); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	s.tids.Store(cp.Thread, tid)
	return nil
}

// Get returns checkpoint id of thread, or its latest checkpoint when id is
// 0. It returns an error wrapping statgraph.ErrNoCheckpoint when there is
// none, and one wrapping statgraph.ErrCorruptCheckpoint when the row does
// not decode.
func (s *Store) Get(ctx context.Context, thread string, id int64) (*statgraph.Checkpoint, error) {
	var cps []*statgraph.Checkpoint
	var err error
	switch {
	case id == 0:
		cps, err = s.query(ctx, thread, " ORDER BY c.id DESC LIMIT 1")
	case id < 0:
		return nil, fmt.Errorf("postgres: thread %q has no checkpoint %d in %s: %w", thread, id, s.where, statgraph.ErrNoCheckpoint)
	default:
		cps, err = s.query(ctx, thread, " AND c.id = $2", id)
	}
	if err != nil {
		return nil, err
	}
	if len(cps) == 0 {
		if id == 0 {
			return nil, fmt.Errorf("postgres: thread %q has no checkpoints in %s: %w", thread, s.where, statgraph.ErrNoCheckpoint)
		}
		return nil, fmt.Errorf("postgres: thread %q has no checkpoint %d in %s: %w", thread, id, s.where, statgraph.ErrNoCheckpoint)
	}
	return cps[0], nil
}

// query reads the checkpoints of thread that the rest of the WHERE clause,
// the order and the limit in tail select; tail's parameters start at $2.
// Every read of the store goes through it.
func (s *Store) query(ctx context.Context, thread, tail string, args ...any) ([]*statgraph.Checkpoint, error) {
	rows, err := s.pool.Query(ctx, s.selectRows+tail, append([]any{thread}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("postgres: reading checkpoints of thread %q from %s: %w", thread, s.where, err)
	}
	defer rows.Close()
	var cps []*statgraph.Checkpoint
	var r row
	var dec rowenc.Decoder
	dst := r.dest()
	for rows.Next() {
		if err := rows.Scan(dst...); err != nil {
			return nil, fmt.Errorf("postgres: reading checkpoints of thread %q from %s: %w", thread, s.where, err)
		}
		cp, err := r.checkpoint(thread, &dec)
		if err != nil {
			return nil, fmt.Errorf("%w: thread %q checkpoint %d in %s: %w; delete the thread or restore the rows from a backup",
				statgraph.ErrCorruptCheckpoint, thread, r.id, s.where, err)
		}
		cps = append(cps, cp)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: reading checkpoints of thread %q from %s: %w", thread, s.where, err)
	}
	return cps, nil
}

var _ statgraph.Checkpointer = (*Store)(nil)
