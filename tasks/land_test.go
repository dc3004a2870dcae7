package tasks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLandField: "land": "serial" is taken from a task or inherited from
// the defaults; any other value is refused at its line:col.
func TestLandField(t *testing.T) {
	f, err := Parse("tasks.json", []byte(`{"defaults": {"land": "serial"},
 "tasks": [{"id": 1, "title": "inherits"}, {"id": 2, "title": "own", "land": "serial"}]}`), "")
	require.NoError(t, err)
	for _, tk := range f.Tasks {
		assert.Equal(t, LandSerial, tk.Land, "task %s", tk.ID)
	}
	_, err = Parse("tasks.json", []byte(`{"tasks": [{"id": 1, "title": "x", "land": "parallel"}]}`), "")
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	require.Len(t, ve.Problems, 1)
	assert.Equal(t, `tasks.json:1:44: task 1: unknown land "parallel" (want "serial", or leave it out)`, ve.Problems[0].String())
}
