package workspace

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/secret"
)

// TestCommitReplacesSecrets: files an attempt changed that hold a secret,
// plainly or base64-encoded, are committed (and published) with it
// replaced, the commit message warns, and the file on disk is untouched.
func TestCommitReplacesSecrets(t *testing.T) {
	const key = "sk-workspace-canary-31c7aa"
	secret.Register("STATGRAPH_WORKSPACE_TEST_KEY", key)
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "sec"})
	ctx := context.Background()

	leak := "found: " + key + "\nb64: " + base64.StdEncoding.EncodeToString([]byte("K="+key)) + "\n"
	require.NoError(t, w.FS().WriteFile("found.txt", leak))
	require.NoError(t, w.FS().WriteFile("clean.txt", "nothing here\n"))
	h, changed, err := w.Commit(ctx, 1, "leaky attempt")
	require.NoError(t, err)
	require.True(t, changed)
	assert.Equal(t, []string{"found.txt"}, w.Scrubbed())

	require.NoError(t, w.Finish(ctx))
	committed := gitRun(t, src, "show", h+":found.txt")
	for _, form := range secret.Forms(key) {
		assert.NotContains(t, committed, form)
	}
	assert.True(t, strings.HasPrefix(committed, "found: [REDACTED]"), committed)
	msg := gitRun(t, src, "log", "-1", "--format=%B", h)
	assert.Contains(t, msg, "warning: statgraph replaced a secret with [REDACTED] in: found.txt")
	assert.NotContains(t, gitRun(t, src, "log", "-p", "--all"), key)
	onDisk, err := os.ReadFile(filepath.Join(w.Dir(), "found.txt"))
	require.NoError(t, err)
	assert.Equal(t, leak, string(onDisk), "only the commit is scrubbed")

	// The next attempt that leaves the file alone reports nothing.
	require.NoError(t, w.FS().WriteFile("clean.txt", "still nothing\n"))
	_, _, err = w.Commit(ctx, 2, "clean attempt")
	require.NoError(t, err)
	assert.Empty(t, w.Scrubbed())
}
