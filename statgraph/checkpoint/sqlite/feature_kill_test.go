package sqlite

import (
	"testing"

	"github.com/statgraph/statgraph/statgraph/checkpoint/checkpointtest"
)

// TestJoinDeferCommandKilled kills a process on a SQLite file while a
// waiting join, a WithDefer node or a Command hand-off is part way, and
// checks that the resumed thread re-runs only the node that was running
// (see checkpointtest.RunFeatureKill). Its helper process is
// TestDurabilityKillHelper.
func TestJoinDeferCommandKilled(t *testing.T) {
	checkpointtest.RunFeatureKill(t, "TestDurabilityKillHelper", killStore)
}
