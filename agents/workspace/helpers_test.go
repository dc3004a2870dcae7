package workspace

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

// TestMain points StateRoot at a temporary directory, so that workspaces
// made without a Root never land in the real home directory.
// childHome is set in the environment of this test binary's children.
const childHome = "STATGRAPH_TEST_CHILD_HOME"

func TestMain(m *testing.M) {
	// A child the tests start from this binary (and kill) shares its
	// parent's home rather than leaving one of its own behind.
	if os.Getenv(childHome) != "" {
		os.Exit(m.Run())
	}
	home, err := os.MkdirTemp("", "statgraph-home-")
	if err != nil {
		panic(err)
	}
	os.Setenv("STATGRAPH_HOME", home)
	os.Setenv(childHome, "1")
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

// testGitEnv is a git environment that works on a machine with no git identity
// and ignores the user's and the system's configuration.
func testGitEnv(home string) []string {
	return append(os.Environ(),
		"HOME="+home,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Test User", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test User", "GIT_COMMITTER_EMAIL=test@example.com",
	)
}

// gitRun runs git in dir and returns its trimmed output, failing the test
// on error: gittest.Git, under the name this package's tests use.
func gitRun(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	return gittest.Git(tb, dir, args...)
}

// writeFiles writes name -> content under dir, creating directories.
func writeFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(tb, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(tb, os.WriteFile(p, []byte(content), 0o644))
	}
}

// newSource makes a repository on branch main with one commit of a.txt and
// dir/b.txt.
func newSource(tb testing.TB) string {
	tb.Helper()
	return gittest.Repo(tb, map[string]string{"a.txt": "alpha\n", "dir/b.txt": "beta\n"})
}

// prepare calls Prepare and closes the workspace when the test ends.
func prepare(tb testing.TB, o Options) *Workspace {
	tb.Helper()
	w, err := Prepare(context.Background(), o)
	require.NoError(tb, err)
	tb.Cleanup(func() { w.Close() })
	return w
}

// snapshot maps every path under dir (except those under skip, relative
// slash paths) to its content, or to "dir"/"-> target" for directories and
// links.
func snapshot(tb testing.TB, dir string, skip ...string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		for _, s := range skip {
			if rel == s {
				return fs.SkipDir
			}
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			out[rel] = "-> " + t
			return err
		case d.IsDir():
			out[rel] = "dir"
		default:
			b, err := os.ReadFile(p)
			out[rel] = string(b)
			return err
		}
		return nil
	})
	require.NoError(tb, err)
	return out
}

func readFile(tb testing.TB, p string) string {
	tb.Helper()
	b, err := os.ReadFile(p)
	require.NoError(tb, err)
	return string(b)
}
