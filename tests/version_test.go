package tests

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

// TestVersionFromBuildInfo builds statgraph with go build in a git
// repository holding this module's files, committed, plus one uncommitted
// file, and checks that version prints that commit's revision once, marked
// "+dirty"; never a bare "dev". (The shared binary cannot show this: a git
// worktree has no .git directory, so go build records no VCS information
// there. The clean case is TestVersionOf in cmd/statgraph.)
func TestVersionFromBuildInfo(t *testing.T) {
	t.Parallel()
	clone := filepath.Join(t.TempDir(), "statgraph")
	for _, f := range strings.Split(gittest.Git(t, root, "ls-files", "-co", "--exclude-standard"), "\n") {
		data, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(clone, f)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(clone, f), data, 0o644))
	}
	gittest.Init(t, clone, nil)
	rev := gittest.Git(t, clone, "rev-parse", "HEAD")[:12]
	require.NoError(t, os.WriteFile(filepath.Join(clone, "NOTES.txt"), []byte("not committed\n"), 0o644))

	exe := filepath.Join(t.TempDir(), "statgraph")
	cmd := exec.Command("go", "build", "-buildvcs=true", "-o", exe, "./cmd/statgraph")
	cmd.Dir = clone
	cmd.Env = append(childEnv(), "GOFLAGS=-buildvcs=true")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build in %s: %s", clone, out)
	out, err = exec.Command(exe, "version").Output()
	require.NoError(t, err)
	v := strings.TrimSpace(string(out))
	assert.True(t, strings.HasPrefix(v, "statgraph "), v)
	assert.Equal(t, 1, strings.Count(v, rev), "the revision of the commit, once: %s", v)
	assert.True(t, strings.HasSuffix(v, "+dirty"), "an uncommitted change: %s", v)
	assert.NotEqual(t, "statgraph dev", v)

	// The default build carries no test hook; the tests' own binary,
	// built with the tag statgraph_testhooks, does.
	const hook = "STATGRAPH_TEST_PUSH_KILL"
	shipped, err := os.ReadFile(exe)
	require.NoError(t, err)
	assert.False(t, bytes.Contains(shipped, []byte(hook)), "the default build of statgraph holds the test hook %s", hook)
	tagged, err := os.ReadFile(bin)
	require.NoError(t, err)
	assert.True(t, bytes.Contains(tagged, []byte(hook)), "the tests' binary (-tags statgraph_testhooks) lacks the test hook %s", hook)
}
