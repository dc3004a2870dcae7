package verifier

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHiddenPathNote: a sandboxed check that fails on a file of the host's
// /tmp (which the sandbox replaces with its own) says so in its summary and
// so in the feedback; a check failing on a missing file of the workspace
// has no note.
func TestHiddenPathNote(t *testing.T) {
	if err := SandboxAvailable(); err != nil {
		t.Fatal("the sandbox is a required part of statgraph (.ci/run installs bubblewrap): ", err)
	}
	_, ws, sb := userRepo(t)
	dir, err := os.MkdirTemp("/tmp", "fixture-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	fixture := filepath.Join(dir, "fixture.txt")
	require.NoError(t, os.WriteFile(fixture, []byte("data\n"), 0o644))

	v, err := Verify(context.Background(), ws, []Check{
		{Name: "tests", Kind: KindTest, Command: Command{Argv: []string{"cat", fixture}, Sandbox: sb}},
		{Name: "lint", Kind: KindLint, Command: Command{Argv: []string{"cat", "missing.txt"}, Sandbox: sb}},
	})
	require.NoError(t, err)
	require.Len(t, v.Errors, 2)
	assert.Contains(t, v.Errors[0], "note: the sandbox gives the command a private, empty /tmp, so "+fixture)
	assert.Contains(t, v.Errors[0], "move it out of /tmp")
	assert.NotContains(t, v.Errors[1], "note:", "a file missing from the workspace is not the sandbox's doing")
	assert.Contains(t, v.RenderFeedback(0), "private, empty /tmp")

	unsandboxed, err := Verify(context.Background(), ws, []Check{{Name: "tests", Command: Command{Argv: []string{"cat", filepath.Join(dir, "gone.txt")}}}})
	require.NoError(t, err)
	assert.NotContains(t, unsandboxed.Errors[0], "note:", "without a sandbox, nothing is hidden")
}
