package tasks

import (
	"encoding/base64"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/secret"
)

// TestSaveScrubsSecrets: error_history and status_reason holding a secret
// (plainly or base64-encoded) reach tasks.json with it replaced.
func TestSaveScrubsSecrets(t *testing.T) {
	const key = "sk-tasks-canary-0b7e55d1"
	secret.Register("STATGRAPH_TASKS_TEST_KEY", key)
	path := copyFixture(t, "plain.json")
	f, err := Load(path, "")
	require.NoError(t, err)
	id := f.Tasks[0].ID
	b64 := base64.StdEncoding.EncodeToString([]byte("KEY=" + key))
	require.NoError(t, f.Apply(id, Outcome{
		Status: StatusFailed, Reason: "check printed " + key, RetryCount: 1,
		ErrorHistory: []string{"Retry 0: tests: " + b64},
	}))
	require.NoError(t, f.Save())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, form := range secret.Forms(key) {
		assert.NotContains(t, string(data), form)
	}
	assert.Contains(t, string(data), "check printed [REDACTED]")
}
