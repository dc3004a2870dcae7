// Package pgtest gives a test its own PostgreSQL database on the server
// named by STATGRAPH_TEST_POSTGRES (found, skipped or failed as
// postgrestest.ConnString says), dropped when the test ends: the queue's
// tests need a whole database, since River's tables live in its public
// schema, where postgrestest gives a schema. It is internal: only
// statgraph's own tests use it.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/statgraph/statgraph/statgraph/checkpoint/postgres/postgrestest"
)

// Database creates a database with a random name on the server in
// STATGRAPH_TEST_POSTGRES and returns its connection string; it is
// dropped (its connections terminated) when t ends. Without the variable
// the test is skipped with one line saying how to enable it, except under
// CI (CI=true), where it fails; a server that cannot be reached fails the
// test.
func Database(t testing.TB) string {
	t.Helper()
	base := postgrestest.ConnString(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("%s is set but the server cannot be reached: %v", postgrestest.Env, err)
	}
	defer admin.Close(ctx)
	name := "sgtest_" + strings.ReplaceAll(uuid.NewString(), "-", "")[:16]
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop test database %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if err := dropDatabase(ctx, c, name); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		t.Fatalf("%s must be a postgres:// URL for the queue's tests, got %q", postgrestest.Env, base)
	}
	u.Path = "/" + name
	return fmt.Sprint(u)
}

// dropDatabase drops the test database name once the connections left in
// it are gone. It ends the test role's own connections itself. It does not
// use DROP DATABASE ... WITH (FORCE), which fails for a role that may not
// end another role's process, such as an autovacuum worker that came to
// the new database's tables: a plain DROP DATABASE stops those itself.
// While other connections stay (object_in_use), it tries again until ctx
// ends.
func dropDatabase(ctx context.Context, c *pgx.Conn, name string) error {
	for {
		if _, err := c.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = $1 AND usename = current_user AND pid <> pg_backend_pid()`, name); err != nil {
			return err
		}
		_, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name)
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55006" {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}
