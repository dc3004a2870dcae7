package workspace

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each publish leaves a reflog entry for the task branch, as git fetch
// did, which git reads (old and new value, identity, message), unless the
// source turned reflogs off.
func TestFinishWritesTheBranchsReflog(t *testing.T) {
	ctx := context.Background()
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "r", Root: t.TempDir()})
	var tips []string
	for i, content := range []string{"one\n", "two\n"} {
		require.NoError(t, w.FS().WriteFile("a.txt", content))
		_, _, err := w.Commit(ctx, i+1, "change a")
		require.NoError(t, err)
		require.NoError(t, w.Finish(ctx))
		tips = append(tips, gitRun(t, w.Dir(), "rev-parse", "HEAD"))
	}
	require.NoError(t, w.Finish(ctx), "a publish that moves nothing writes no entry")

	log := gitRun(t, src, "reflog", "show", "--format=%H %gs", "refs/heads/"+w.Branch())
	assert.Equal(t, []string{
		tips[1] + " statgraph: publish task r",
		tips[0] + " statgraph: publish task r",
	}, strings.Split(log, "\n"))
	raw := readFile(t, filepath.Join(src, ".git", "logs", "refs", "heads", filepath.FromSlash(w.Branch())))
	lines := strings.Split(strings.TrimSuffix(raw, "\n"), "\n")
	require.Len(t, lines, 2)
	assert.True(t, strings.HasPrefix(lines[0], strings.Repeat("0", 40)+" "+tips[0]+" statgraph <statgraph@localhost> "), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], tips[0]+" "+tips[1]+" "), lines[1])
	gitRun(t, src, "fsck", "--strict")

	off := newSource(t)
	gitRun(t, off, "config", "core.logAllRefUpdates", "false")
	w2 := prepare(t, Options{Source: off, TaskID: "r", Root: t.TempDir()})
	require.NoError(t, w2.FS().WriteFile("a.txt", "three\n"))
	_, _, err := w2.Commit(ctx, 1, "change a")
	require.NoError(t, err)
	require.NoError(t, w2.Finish(ctx))
	assert.NoFileExists(t, filepath.Join(off, ".git", "logs", "refs", "heads", filepath.FromSlash(w2.Branch())))
}
