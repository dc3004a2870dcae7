package tests

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

// statgraph run refuses a directory that is not a git repository, or a
// repository without a commit, with exit 2, a message saying what to do,
// and nothing written.
func TestRunNeedsARepositoryWithACommit(t *testing.T) {
	t.Parallel()
	tasksJSON := []byte(`{"tasks": [{"id": 1, "title": "t", "executor": {"command": ["true"]}, "test_cmd": "true"}]}` + "\n")
	for _, tc := range []struct {
		name string
		init bool
		want string
	}{
		{"not a repository", false, "is not the top directory of a git repository"},
		{"no commit", true, "has no commit yet: tasks start from its HEAD commit; commit your files first"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.init {
				gittest.Git(t, dir, "init", "-q")
			}
			path := filepath.Join(dir, "tasks.json")
			require.NoError(t, os.WriteFile(path, tasksJSON, 0o644))
			r := statgraph(t, dir, "run", "tasks.json")
			require.Equal(t, 2, r.code, "stderr: %s", r.stderr)
			require.Contains(t, r.stderr, tc.want)
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, tasksJSON, after)
			require.NoDirExists(t, filepath.Join(dir, ".statgraph"))
			require.NoDirExists(t, planOf(t, dir, "tasks.json", "").Dir)
			require.Empty(t, leftovers(t, dir, "tasks.json"))
		})
	}
}
