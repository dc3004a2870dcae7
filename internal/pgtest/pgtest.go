// Package pgtest gives a test its own PostgreSQL database on the server
// named by STATGRAPH_TEST_POSTGRES (found, skipped or failed as
// postgrestest.ConnString says), dropped when the test ends: the queue's
// tests need a whole database, since River's tables live in its public
// schema, where postgrestest gives a schema. It is internal: only
// statgraph's own tests use it.
package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
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
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
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
