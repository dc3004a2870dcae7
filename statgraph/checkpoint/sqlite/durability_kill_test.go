package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/checkpointtest"
)

var killStore = checkpointtest.KillStore{
	New: func(t *testing.T) string { return filepath.Join(t.TempDir(), "cp.db") },
	Open: func(ctx context.Context, place string) (statgraph.Checkpointer, error) {
		return Open(ctx, place)
	},
}

// TestDurabilityKillHelper is the process TestDurabilityModesKilled and
// TestJoinDeferCommandKilled kill.
func TestDurabilityKillHelper(t *testing.T) { checkpointtest.KillHelper(t, killStore) }

// TestDurabilityModesKilled kills a process running parallel nodes under
// each durability mode on a SQLite file and counts what runs again (see
// checkpointtest.RunDurabilityKill).
func TestDurabilityModesKilled(t *testing.T) {
	checkpointtest.RunDurabilityKill(t, "TestDurabilityKillHelper", killStore)
}
