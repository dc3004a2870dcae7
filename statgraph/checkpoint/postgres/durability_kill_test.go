package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/checkpointtest"
	"github.com/statgraph/statgraph/statgraph/checkpoint/postgres/postgrestest"
)

// killStore's places are "schema|connection string".
var killStore = checkpointtest.KillStore{
	New: func(t *testing.T) string {
		conn := postgrestest.ConnString(t)
		return postgrestest.Schema(t, conn) + "|" + conn
	},
	Open: func(ctx context.Context, place string) (statgraph.Checkpointer, error) {
		schema, conn, _ := strings.Cut(place, "|")
		return Open(ctx, conn, Schema(schema))
	},
}

// TestDurabilityKillHelper is the process TestDurabilityModesKilled and
// TestJoinDeferCommandKilled kill.
func TestDurabilityKillHelper(t *testing.T) { checkpointtest.KillHelper(t, killStore) }

// TestDurabilityModesKilled kills a process running parallel nodes under
// each durability mode on Postgres and counts what runs again (see
// checkpointtest.RunDurabilityKill).
func TestDurabilityModesKilled(t *testing.T) {
	checkpointtest.RunDurabilityKill(t, "TestDurabilityKillHelper", killStore)
}
