package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// branchWith commits files on a new branch of src made from main, and
// leaves main checked out.
func branchWith(t *testing.T, src, branch string, files map[string]string) {
	t.Helper()
	gitRun(t, src, "checkout", "-q", "-b", branch, "main")
	writeFiles(t, src, files)
	gitRun(t, src, "add", "-A")
	gitRun(t, src, "commit", "-q", "-m", "work on "+branch)
	gitRun(t, src, "checkout", "-q", "main")
}

func TestPrepareMergesBranches(t *testing.T) {
	src := newSource(t)
	branchWith(t, src, "one", map[string]string{"one.txt": "1\n"})
	branchWith(t, src, "two", map[string]string{"two.txt": "2\n"})
	root := t.TempDir()
	w := prepare(t, Options{Source: src, TaskID: "3", Root: root, Base: "one", Merge: []string{"two"}})
	require.Equal(t, "1\n", readFile(t, filepath.Join(w.Dir(), "one.txt")))
	require.Equal(t, "2\n", readFile(t, filepath.Join(w.Dir(), "two.txt")))
	require.Empty(t, w.Conflicts())
	parents := gitRun(t, w.Dir(), "log", "-1", "--format=%P", "refs/statgraph/base")
	require.Equal(t, gitRun(t, src, "rev-parse", "one")+" "+gitRun(t, src, "rev-parse", "two"), parents)
	diff, err := w.Diff(context.Background())
	require.NoError(t, err)
	require.Empty(t, diff, "the merge is the base: the task's diff starts empty")
	_, changed, err := w.Commit(context.Background(), 1, "nothing")
	require.NoError(t, err)
	require.False(t, changed, "the stat cache matches the merged checkout")

	w.Close()
	again := prepare(t, Options{Source: src, TaskID: "3", Root: root, Base: "one", Merge: []string{"two"}})
	require.Equal(t, w.base, again.base, "reopening with the same branches keeps the workspace")
}

func TestPrepareMergeDropsContainedBranches(t *testing.T) {
	src := newSource(t)
	branchWith(t, src, "one", map[string]string{"one.txt": "1\n"})
	gitRun(t, src, "branch", "two", "one")
	gitRun(t, src, "checkout", "-q", "two")
	writeFiles(t, src, map[string]string{"two.txt": "2\n"})
	gitRun(t, src, "add", "-A")
	gitRun(t, src, "commit", "-q", "-m", "two on one")
	gitRun(t, src, "checkout", "-q", "main")
	w := prepare(t, Options{Source: src, TaskID: "3", Root: t.TempDir(), Base: "one", Merge: []string{"two"}})
	require.Equal(t, gitRun(t, src, "rev-parse", "two"), w.base.String(), "two contains one: no merge commit")
}

func TestPrepareMergeConflict(t *testing.T) {
	src := newSource(t)
	branchWith(t, src, "one", map[string]string{"a.txt": "from one\n"})
	branchWith(t, src, "two", map[string]string{"a.txt": "from two\n", "two.txt": "2\n"})
	root := t.TempDir()
	w := prepare(t, Options{Source: src, TaskID: "3", Root: root, Base: "one", Merge: []string{"two"}})
	require.Equal(t, []string{"a.txt"}, w.Conflicts())
	got := readFile(t, filepath.Join(w.Dir(), "a.txt"))
	require.Contains(t, got, "<<<<<<< one\nfrom one\n=======\nfrom two\n>>>>>>> two\n")
	require.Equal(t, "2\n", readFile(t, filepath.Join(w.Dir(), "two.txt")))
	w.Close()
	again := prepare(t, Options{Source: src, TaskID: "3", Root: root, Base: "one", Merge: []string{"two"}})
	require.Equal(t, []string{"a.txt"}, again.Conflicts(), "the conflicts are read back from the base commit")

	skip := prepare(t, Options{Source: src, TaskID: "4", Root: root, Base: "one", Merge: []string{"two"}, SkipConflicts: true})
	require.Empty(t, skip.Conflicts())
	require.Equal(t, []Skipped{{Branch: "two", Paths: []string{"a.txt"}}}, skip.Skipped())
	require.Equal(t, "from one\n", readFile(t, filepath.Join(skip.Dir(), "a.txt")))
}

func TestPrepareCopyFilesAndSetupOnce(t *testing.T) {
	src := newSource(t)
	writeFiles(t, src, map[string]string{".env": "KEY=1\n", "conf/local.ini": "x\n"})
	root := t.TempDir()
	runs := 0
	o := Options{Source: src, TaskID: "1", Root: root, CopyFiles: []string{".env", "conf/local.ini"},
		Setup: func(_ context.Context, dir string) error {
			runs++
			return os.WriteFile(filepath.Join(dir, "setup.log"), []byte("ran\n"), 0o644)
		}}
	w := prepare(t, o)
	require.Equal(t, "KEY=1\n", readFile(t, filepath.Join(w.Dir(), ".env")))
	require.Equal(t, "x\n", readFile(t, filepath.Join(w.Dir(), "conf/local.ini")))
	require.Equal(t, 1, runs)
	hash, _, err := w.Commit(context.Background(), 1, "attempt")
	require.NoError(t, err)
	files := gitRun(t, w.Dir(), "ls-tree", "-r", "--name-only", hash)
	require.NotContains(t, files, ".env", "copied files are never committed")
	require.NotContains(t, files, "local.ini")
	w.Close()
	prepare(t, o)
	require.Equal(t, 1, runs, "setup runs once per workspace")

	for _, bad := range []string{"../x", "/etc/passwd", ".git/config"} {
		_, err := Prepare(context.Background(), Options{Source: src, TaskID: "2", Root: root, CopyFiles: []string{bad}})
		require.Error(t, err, bad)
	}
	_, err = Prepare(context.Background(), Options{Source: src, TaskID: "5", Root: root, CopyFiles: []string{"missing.env"}})
	require.ErrorContains(t, err, "missing.env does not exist")
	require.NoError(t, os.Symlink("/etc/hostname", filepath.Join(src, "link")))
	_, err = Prepare(context.Background(), Options{Source: src, TaskID: "6", Root: root, CopyFiles: []string{"link"}})
	require.Error(t, err, "a link out of the repository is refused")
	require.False(t, strings.Contains(err.Error(), "does not exist"), err.Error())
}

func TestRemove(t *testing.T) {
	src := newSource(t)
	root := t.TempDir()
	w := prepare(t, Options{Source: src, TaskID: "1", Root: root})
	freed, err := w.Remove()
	require.NoError(t, err)
	require.Positive(t, freed)
	require.NoDirExists(t, w.Dir())
	freed, err = RemoveDir(root, "1")
	require.NoError(t, err)
	require.Zero(t, freed)
}

func TestPrepareMergesThreeBranches(t *testing.T) {
	src := newSource(t)
	branchWith(t, src, "one", map[string]string{"one.txt": "1\n"})
	branchWith(t, src, "two", map[string]string{"two.txt": "2\n"})
	branchWith(t, src, "three", map[string]string{"three.txt": "3\n", "a.txt": "changed by three\n"})
	w := prepare(t, Options{Source: src, TaskID: "4", Root: t.TempDir(), Base: "one", Merge: []string{"two", "three"}})
	require.Empty(t, w.Conflicts())
	for name, want := range map[string]string{"one.txt": "1\n", "two.txt": "2\n", "three.txt": "3\n", "a.txt": "changed by three\n"} {
		require.Equal(t, want, readFile(t, filepath.Join(w.Dir(), name)), name)
	}
	parents := strings.Fields(gitRun(t, w.Dir(), "log", "-1", "--format=%P", "refs/statgraph/base"))
	require.Len(t, parents, 3, "one merge commit whose parents are the three branches")
}
