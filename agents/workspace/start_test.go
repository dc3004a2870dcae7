package workspace

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A workspace made on another machine to continue a task (Options.Start:
// the last attempt's commit) has the attempt's files and branch, but its
// base is still where the task began: Reset("base") goes back there, and
// Diff shows the whole task's change, not only what comes after the
// attempt. (With the attempt's commit given as Base, as a worker taking
// a unit over did, both stopped at the attempt.)
func TestStartContinuesAboveTheBase(t *testing.T) {
	ctx := context.Background()
	src := newSource(t)
	baseCommit := gitRun(t, src, "rev-parse", "HEAD")
	first := prepare(t, Options{Source: src, TaskID: "s", Root: t.TempDir()})
	require.NoError(t, first.FS().WriteFile("a.txt", "attempt 1\n"))
	h1, _, err := first.Commit(ctx, 1, "one")
	require.NoError(t, err)
	require.NoError(t, first.Finish(ctx)) // in the source as statgraph/s, as on the remote

	w := prepare(t, Options{Source: src, TaskID: "s", Root: t.TempDir(), Start: "statgraph/s"})
	assert.Equal(t, h1, gitRun(t, w.Dir(), "rev-parse", "HEAD"), "the branch continues from the attempt")
	assert.Equal(t, "attempt 1\n", readFile(t, w.Dir()+"/a.txt"))
	assert.Equal(t, baseCommit, gitRun(t, w.Dir(), "rev-parse", string(baseRef)), "the base is where the task began")
	d, err := w.Diff(ctx)
	require.NoError(t, err)
	assert.Contains(t, d, "+attempt 1", "the diff is the whole task's")

	require.NoError(t, w.Reset(ctx, "base"))
	assert.Equal(t, "alpha\n", readFile(t, w.Dir()+"/a.txt"), "a reset goes back to where the task began")
	assert.Equal(t, h1, gitRun(t, w.Dir(), "rev-parse", "HEAD"), "the branch keeps the attempt")
	require.NoError(t, w.FS().WriteFile("c.txt", "two\n"))
	_, _, err = w.Commit(ctx, 2, "two")
	require.NoError(t, err)
	assert.Equal(t, h1, gitRun(t, w.Dir(), "rev-parse", "HEAD~1"), "the next attempt follows the first")

	_, err = Prepare(ctx, Options{Source: src, TaskID: "t", Root: t.TempDir(), Start: "no-such-branch"})
	require.ErrorContains(t, err, "Options.Start")
}
