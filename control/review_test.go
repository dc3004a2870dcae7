package control_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
)

func TestParseComment(t *testing.T) {
	for in, want := range map[string]control.Comment{
		"main.go:12:handle the error":     {File: "main.go", Line: 12, Text: "handle the error"},
		"cmd/x.go:3-7: split: this, too ": {File: "cmd/x.go", Line: 3, EndLine: 7, Text: "split: this, too"},
	} {
		got, err := control.ParseComment(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	assert.Equal(t, "cmd/x.go:3-7: split", control.Comment{File: "cmd/x.go", Line: 3, EndLine: 7, Text: "split"}.String())
	for _, bad := range []string{"main.go", "main.go:12", "main.go:x:text", "main.go:0:text", "main.go:9-3:text",
		"main.go:1:  ", ":1:text", "/etc/passwd:1:text", "../out:1:text", "a/../b:1:text"} {
		_, err := control.ParseComment(bad)
		assert.ErrorIs(t, err, control.ErrBadComment, bad)
	}
}

// Review refuses, with nothing changed, no comments, a bad comment, an
// unknown task and a task that is not done.
func TestReviewRefusals(t *testing.T) {
	file := controltest.NewPlan(t, controltest.AskPlan)
	c, err := control.Open(control.Options{File: file})
	require.NoError(t, err)
	defer c.Close()
	ok := []control.Comment{{File: "out.txt", Line: 1, Text: "x"}}
	require.ErrorIs(t, c.Review(bg, "1", nil), control.ErrBadComment)
	require.ErrorIs(t, c.Review(bg, "1", []control.Comment{{File: "out.txt", Line: 1}}), control.ErrBadComment)
	require.ErrorIs(t, c.Review(bg, "9", ok), control.ErrNoTask)
	err = c.Review(bg, "1", ok)
	require.ErrorIs(t, err, control.ErrNotReviewable)
	assert.Contains(t, err.Error(), "task 1 is pending")
	kind, _ := control.Classify(err, control.Words{})
	assert.Equal(t, control.KindConflict, kind)
	ts, err := c.Tasks(bg)
	require.NoError(t, err)
	assert.Equal(t, "pending", ts[0].Status)
}
