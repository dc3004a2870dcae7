package tasks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// defaults.notify is the run's notification URL: read when it is an
// http(s) URL, refused with its position otherwise, and not a task's field.
func TestDefaultsNotify(t *testing.T) {
	f, err := Parse("tasks.json", []byte(`{"defaults": {"notify": "https://hooks.example.com/T1/B2"}, "tasks": [{"id": 1, "title": "a"}]}`), "")
	require.NoError(t, err)
	assert.Equal(t, "https://hooks.example.com/T1/B2", f.Defaults.Notify)

	for _, bad := range []string{`"ftp://example.com/x"`, `"hooks.example.com"`, `3`} {
		_, err := Parse("tasks.json", []byte(`{"defaults": {"notify": `+bad+`}, "tasks": [{"id": 1, "title": "a"}]}`), "")
		require.Error(t, err, bad)
		assert.Contains(t, err.Error(), "tasks.json:1:", bad)
		assert.Contains(t, err.Error(), "notify", bad)
	}
}
