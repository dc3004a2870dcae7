// Package postgrestest gives tests a real PostgreSQL server to use, the one
// the environment variable STATGRAPH_TEST_POSTGRES names, and a schema of
// their own on it.
//
// Without the variable a test skips, saying how to enable it, except under
// CI (CI=true), where a test that needs Postgres and cannot have it fails.
// With the variable set, a server that does not answer fails the test:
// a typo in the variable must not pass for a green run.
package postgrestest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Env is the environment variable that holds the connection string.
const Env = "STATGRAPH_TEST_POSTGRES"

// ConnString returns the connection string of the test server, after
// checking that the server answers within 10 s. It skips t when Env is
// unset outside CI, and fails it under CI or when the server does not
// answer.
func ConnString(t testing.TB) string {
	t.Helper()
	conn := os.Getenv(Env)
	if conn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: under CI the Postgres tests must run (.ci/run starts PostgreSQL and sets it)", Env)
		}
		t.Skipf("Postgres tests skipped: set %s=postgres://user:password@127.0.0.1:5432/db?sslmode=disable to run them", Env)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, conn)
	if err != nil {
		t.Fatalf("%s is set, but its server does not answer: %v; start PostgreSQL or fix the variable", Env, err)
	}
	c.Close(ctx)
	return conn
}

// Schema returns a new schema name, unique to this test, and drops the
// schema (whatever it then holds) when the test ends. It does not create
// the schema: the code under test does.
func Schema(t testing.TB, conn string) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name := "sgtest_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, conn)
		if err != nil {
			t.Errorf("dropping test schema %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("dropping test schema %s: %v", name, err)
		}
	})
	return name
}
