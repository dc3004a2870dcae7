package dispatch

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A save blocks the dispatch loop (no unit starts while the file is
// written and fsynced), so after a save that took S the next one waits
// until 19·S has passed: saves take at most 1/20 of the loop's time,
// however large the file. A file saved at once after a cheap save still
// is (cost 0).
func TestSaverBlocksTheLoopAtMostATwentiethOfItsTime(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	const cost = 450 * time.Millisecond // a 10,000-task file on a slow disk
	s := saver{dirty: true, last: t0, cost: cost}
	assert.False(t, s.due(t0.Add(18*cost)), "18 save-times after a save, saving again would take over 1/20 of the time")
	assert.True(t, s.due(t0.Add(19*cost)))

	cheap := saver{dirty: true, last: t0, cost: 0}
	assert.True(t, cheap.due(t0), "after a save that cost nothing the next is due at once")
}
