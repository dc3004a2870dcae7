package tasks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const resetFile = `{"tasks": [
  {"id": 1, "title": "a", "status": "failed", "status_reason": "failed after 3 attempts", "retry_count": 3, "error_history": ["Retry 1: x"], "failed_at": "2025-01-02T15:04:05Z"},
  {"id": 2, "title": "b", "status": "blocked", "status_reason": "dependency 1 failed", "dependencies": [1]},
  {"id": 3, "title": "c", "status": "blocked", "status_reason": "dependency 2 blocked", "dependencies": [2]},
  {"id": 4, "title": "d", "status": "done"},
  {"id": 5, "title": "e", "status": "failed", "retry_count": 1}
]}`

func TestResetSendsTaskAndItsBlockedChainBack(t *testing.T) {
	f, err := Parse("tasks.json", []byte(resetFile), "")
	require.NoError(t, err)
	got, err := f.Reset("1")
	require.NoError(t, err)
	assert.Equal(t, []string{"1", "2", "3"}, got)
	t1, _ := f.Task("1")
	assert.Equal(t, StatusPending, t1.Status)
	assert.Empty(t, t1.StatusReason)
	assert.Zero(t, t1.RetryCount)
	assert.Nil(t, t1.FailedAt)
	assert.Equal(t, []string{"Retry 1: x"}, t1.ErrorHistory, "error_history stays as a record")
	t5, _ := f.Task("5")
	assert.Equal(t, StatusFailed, t5.Status, "task 5 was not named")

	_, err = f.Reset("4")
	assert.ErrorIs(t, err, ErrNotResettable)
	_, err = f.Reset("9")
	assert.ErrorIs(t, err, ErrNoTask)
}

func TestResetFailed(t *testing.T) {
	f, err := Parse("tasks.json", []byte(resetFile), "")
	require.NoError(t, err)
	assert.Equal(t, []string{"1", "2", "3", "5"}, f.ResetFailed())
	assert.Equal(t, map[string]string{"1": StatusPending, "2": StatusPending, "3": StatusPending, "4": StatusDone, "5": StatusPending}, f.Statuses())
}
