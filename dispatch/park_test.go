package dispatch

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/tasks"
)

// TestParkDefault: a limit with no reset time (a real agent CLI's bare
// 429) parks the unit for ParkDefault (15 minutes when 0), at most
// ParkMax, saying so in the reason; a limit with its reset still parks
// until that reset.
func TestParkDefault(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	bare := &llm.LimitError{Reason: "agent CLI claude: Request rejected (429)"}
	tests := []struct {
		name         string
		d            *Dispatcher
		err          error
		want         time.Duration
		wantInReason string
	}{
		{"default", &Dispatcher{}, bare, 15 * time.Minute, "no reset time given: waiting --park-default 15m0s"},
		{"set", &Dispatcher{ParkDefault: 2 * time.Second}, bare, 2 * time.Second, "--park-default 2s"},
		{"bounded by park-max", &Dispatcher{ParkDefault: time.Hour, ParkMax: 10 * time.Minute}, bare, 10 * time.Minute, "--park-default 10m0s"},
		{"reset given", &Dispatcher{ParkDefault: time.Hour}, &llm.LimitError{Until: now.Add(3 * time.Second), Reason: "try again in 3s"}, 3 * time.Second, "try again in 3s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, stop, ok := tt.d.parkResult(tasks.Task{}, agents.TaskState{}, tt.err, now)
			require.True(t, ok)
			assert.Empty(t, stop)
			assert.Equal(t, tasks.StatusParked, r.Status)
			require.NotNil(t, r.ParkedUntil)
			assert.Equal(t, now.Add(tt.want), *r.ParkedUntil)
			assert.Contains(t, r.Reason, tt.wantInReason)
			assert.Contains(t, r.Reason, tt.err.(*llm.LimitError).Reason)
		})
	}
}
