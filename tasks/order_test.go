package tasks

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func loadUnits(t *testing.T, name string) []Unit {
	t.Helper()
	f, err := Load(filepath.Join("testdata", name), "")
	require.NoError(t, err)
	return f.Units()
}

func TestUnits(t *testing.T) {
	units := loadUnits(t, "plain.json")
	type flat struct {
		ID, Parent string
		Deps       []string
	}
	var got []flat
	for _, u := range units {
		got = append(got, flat{u.ID, u.Parent, u.Deps})
		assert.Equal(t, u.ID, u.Task.ID)
	}
	assert.Equal(t, []flat{
		{"1", "", nil},
		{"2.1", "2", []string{"1"}},               // the parent's dependency
		{"2.2", "2", []string{"1", "2.1"}},        // sibling by local id 1
		{"2.3", "2", []string{"1", "2.2", "2.1"}}, // full id "2.2", sibling 1
		{"3", "", []string{"2.1", "2.2", "2.3"}},  // a parent stands for all its subtasks
	}, got)
}

func TestUnitsSubtaskBareIDFallsBackToTask(t *testing.T) {
	f, err := Parse("tasks.json", []byte(`{"tasks": [
		{"id": 1, "title": "one"},
		{"id": 2, "title": "two", "subtasks": [{"id": 5, "title": "a", "dependencies": [1]}]}
	]}`), "")
	require.NoError(t, err)
	units := f.Units()
	require.Len(t, units, 2)
	assert.Equal(t, []string{"1"}, units[1].Deps, "no sibling 1, so 1 is the top-level task")
}

func TestNext(t *testing.T) {
	units := loadUnits(t, "plain.json")
	tests := []struct {
		name    string
		status  map[string]string
		ready   []string
		blocked []Blocked
	}{
		{
			name:  "start",
			ready: []string{"1"},
		},
		{
			name:   "first done",
			status: map[string]string{"1": "done"},
			ready:  []string{"2.1"},
		},
		{
			name:   "running units are still listed while runnable",
			status: map[string]string{"1": "done", "2.1": "in-progress"},
			ready:  []string{"2.1"},
		},
		{
			name:   "interrupted units run again",
			status: map[string]string{"1": "done", "2.1": "done", "2.2": "interrupted"},
			ready:  []string{"2.2"},
		},
		{
			name:   "failure blocks the whole chain at once",
			status: map[string]string{"1": "failed"},
			blocked: []Blocked{
				{"2.1", "dependency 1 failed"},
				{"2.2", "dependency 1 failed"},
				{"2.3", "dependency 1 failed"},
				{"3", "dependency 2.1 blocked"},
			},
		},
		{
			name:   "cancelled dependency blocks",
			status: map[string]string{"1": "done", "2.1": "done", "2.2": "cancelled"},
			blocked: []Blocked{
				{"2.3", "dependency 2.2 cancelled"},
				{"3", "dependency 2.2 cancelled"},
			},
		},
		{
			name:   "deferred dependency waits",
			status: map[string]string{"1": "deferred"},
		},
		{
			name:    "all done",
			status:  map[string]string{"1": "done", "2.1": "done", "2.2": "done", "2.3": "done", "3": "done"},
			ready:   nil,
			blocked: nil,
		},
		{
			name:   "already blocked units are not reported again",
			status: map[string]string{"1": "failed", "2.1": "blocked", "2.2": "blocked", "2.3": "blocked", "3": "blocked"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step := Next(units, tt.status)
			assert.Equal(t, tt.ready, step.Ready)
			assert.Equal(t, tt.blocked, step.Blocked)
		})
	}
}

func TestStatusesFollowSetters(t *testing.T) {
	f, err := Load(filepath.Join("testdata", "plain.json"), "")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"1": "pending", "2.1": "", "2.2": "", "2.3": "", "3": ""}, f.Statuses())
	require.NoError(t, f.SetStatus("1", StatusDone, ""))
	require.NoError(t, f.SetStatus("2.1", StatusFailed, ""))
	st := f.Statuses()
	assert.Equal(t, map[string]string{"1": "done", "2.1": "failed", "2.2": "", "2.3": "", "3": ""}, st)
	assert.Equal(t, []Blocked{
		{"2.2", "dependency 2.1 failed"},
		{"2.3", "dependency 2.1 failed"},
		{"3", "dependency 2.1 failed"},
	}, Next(f.Units(), st).Blocked)
}

// TestNextRunsAll drives Next like a dispatcher that finishes every ready
// unit at once, and checks that every unit runs after its dependencies.
func TestNextRunsAll(t *testing.T) {
	units := loadUnits(t, "plain.json")
	status := map[string]string{}
	var order []string
	for range len(units) + 1 {
		step := Next(units, status)
		if len(step.Ready) == 0 {
			break
		}
		for _, id := range step.Ready {
			status[id] = StatusDone
			order = append(order, id)
		}
	}
	assert.Equal(t, []string{"1", "2.1", "2.2", "2.3", "3"}, order)
}
