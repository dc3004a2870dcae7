package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

// planTasks is a tasks file whose two tasks write name into which.txt in
// their workspace, so each branch shows which plan made it.
func planTasks(name string) string {
	return `{"tasks": [
  {"id": 1, "title": "first of ` + name + `", "test_cmd": "true",
   "executor": {"command": ["sh", "-c", "echo ` + name + ` > which.txt"]}},
  {"id": 2, "title": "second of ` + name + `", "dependencies": [1], "test_cmd": "true",
   "executor": {"command": ["sh", "-c", "echo ` + name + ` > which.txt"]}}
]}
`
}

// TestTwoPlansInOneRepository runs two tasks files with the same task ids
// in one repository, the second even with the first one's run store: they
// share no checkpoint thread, workspace or branch.
func TestTwoPlansInOneRepository(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"tasks.json": planTasks("alpha"), "other/tasks.json": planTasks("beta")})
	a, b := planOf(t, dir, "tasks.json", ""), planOf(t, dir, "other/tasks.json", "")

	// Kept, to compare the plans' workspaces (a published task's workspace is removed by default).
	r := statgraph(t, dir, "run", "-j", "1", "--keep-workspaces", "tasks.json")
	require.Equal(t, 0, r.code, "first plan\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	r = statgraph(t, dir, "run", "-j", "1", "--keep-workspaces", "--repo", ".", "--store", a.Store(), "other/tasks.json")
	require.Equal(t, 0, r.code, "second plan, sharing the first one's run store\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)

	assert.NotEqual(t, a.Thread("1"), b.Thread("1"))
	assert.NotEqual(t, a.WorkDir(), b.WorkDir())
	for name, plan := range map[string]struct{ branch, work string }{
		"alpha": {a.Branch("2"), a.WorkDir()},
		"beta":  {b.Branch("2"), b.WorkDir()},
	} {
		assert.Equal(t, name, gittest.Git(t, dir, "show", plan.branch+":which.txt"), "branch %s", plan.branch)
		data, err := os.ReadFile(filepath.Join(plan.work, "2", "which.txt"))
		require.NoError(t, err)
		assert.Equal(t, name+"\n", string(data), "workspace of task 2 of %s", name)
	}
	branches := strings.Fields(gittest.Git(t, dir, "branch", "--list", "statgraph/*", "--format=%(refname:short)"))
	assert.ElementsMatch(t, []string{a.Branch("1"), a.Branch("2"), b.Branch("1"), b.Branch("2")}, branches)

	// status reads each plan's own threads.
	r = statgraph(t, dir, "status", "--repo", ".", "--store", a.Store(), "other/tasks.json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "second of beta")
}

// TestStateOutsideTheRepository checks that a run writes nothing into the
// repository but the tasks file, and that the workspace is not inside it:
// walking up from the workspace never reaches the user's .git.
func TestStateOutsideTheRepository(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"tasks.json": planTasks("alpha")})
	// Kept, to walk up from it (a published task's workspace is removed by default).
	r := statgraph(t, dir, "run", "-j", "1", "--keep-workspaces", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)

	plan := planOf(t, dir, "tasks.json", "")
	assert.True(t, strings.HasPrefix(plan.Dir, stateHome+string(filepath.Separator)), "the plan's state %s is under STATGRAPH_HOME %s", plan.Dir, stateHome)
	assert.FileExists(t, plan.Store())
	ws := filepath.Join(plan.WorkDir(), "1")
	require.DirExists(t, filepath.Join(ws, ".git"))
	for d := filepath.Dir(ws); d != filepath.Dir(d); d = filepath.Dir(d) {
		assert.NotEqual(t, dir, d, "the workspace %s is inside the repository", ws)
		assert.NoDirExists(t, filepath.Join(d, ".git"), "a .git above the workspace %s", ws)
	}
	assert.NoDirExists(t, filepath.Join(dir, ".statgraph"))
	assert.Equal(t, "M tasks.json", gittest.Git(t, dir, "status", "--porcelain", "--ignored"), "only the tasks file changed in the repository")
}

// TestSymlinkedStateRefused: a repository that commits .statgraph as a
// symbolic link, and a plan state directory that is one, are refused with
// exit 2 before anything is written.
func TestSymlinkedStateRefused(t *testing.T) {
	t.Parallel()
	t.Run("committed .statgraph", func(t *testing.T) {
		t.Parallel()
		target := t.TempDir()
		dir := newRepo(t, map[string]string{"tasks.json": planTasks("alpha")})
		require.NoError(t, os.Symlink(target, filepath.Join(dir, ".statgraph")))
		gittest.Commit(t, dir, "commit the link", nil)
		checkRefused(t, dir, filepath.Join(dir, ".statgraph"), target)
	})
	t.Run("state directory", func(t *testing.T) {
		t.Parallel()
		target := t.TempDir()
		dir := newRepo(t, map[string]string{"tasks.json": planTasks("alpha")})
		plan := planOf(t, dir, "tasks.json", "")
		require.NoError(t, os.MkdirAll(filepath.Dir(plan.Dir), 0o755))
		require.NoError(t, os.Symlink(target, plan.Dir))
		checkRefused(t, dir, plan.Dir, target)
	})
}

// checkRefused runs the tasks file in dir and checks the run is refused for
// the link at link (pointing to target) and wrote nothing.
func checkRefused(t *testing.T, dir, link, target string) {
	t.Helper()
	before, err := os.ReadFile(filepath.Join(dir, "tasks.json"))
	require.NoError(t, err)
	r := statgraph(t, dir, "run", "tasks.json")
	require.Equal(t, 2, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, link+" points to "+target)
	assert.Contains(t, r.stderr, "remove")
	assert.Contains(t, r.stderr, "nothing was changed")
	after, err := os.ReadFile(filepath.Join(dir, "tasks.json"))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "tasks.json is unchanged")
	assert.Empty(t, leftovers(t, dir, "tasks.json"), "no lock or temporary file")
	entries, err := os.ReadDir(target)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing was written through the link")
	assert.Empty(t, gittest.Git(t, dir, "branch", "--list", "statgraph/*"), "no branch was published")
}

// TestRunRepublishesDoneBranches: a done task whose branch was deleted, or
// left pointing at a commit the repository cannot read, gets its branch
// back on the next run, published again from its workspace; the first run
// keeps the workspaces (--keep-workspaces) for that. Without its
// workspace (removed once published, by default), a deleted branch cannot
// be published again: the run says so and how to redo the task.
func TestRunRepublishesDoneBranches(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"tasks.json": planTasks("alpha")})
	plan := planOf(t, dir, "tasks.json", "")
	r := statgraph(t, dir, "run", "-j", "1", "--keep-workspaces", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	tip1 := gittest.Git(t, dir, "rev-parse", plan.Branch("1"))
	tip2 := gittest.Git(t, dir, "rev-parse", plan.Branch("2"))

	gittest.Git(t, dir, "branch", "-D", plan.Branch("1"))
	// An unreadable branch, as a publish killed by an older version left it.
	ref := filepath.Join(dir, ".git", "refs", "heads", filepath.FromSlash(plan.Branch("2")))
	gittest.Git(t, dir, "pack-refs", "--all", "--prune")
	require.NoError(t, os.MkdirAll(filepath.Dir(ref), 0o755))
	require.NoError(t, os.WriteFile(ref, []byte(strings.Repeat("ab", 20)+"\n"), 0o644))

	r = statgraph(t, dir, "run", "-j", "1", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout+r.stderr, "published it again")
	t.Logf("second run:\n%s\n%s", r.stdout, r.stderr)
	assert.Equal(t, tip1, gittest.Git(t, dir, "rev-parse", plan.Branch("1")))
	assert.Equal(t, tip2, gittest.Git(t, dir, "rev-parse", plan.Branch("2")))
	gittest.Git(t, dir, "fsck", "--full")

	t.Run("workspace removed", func(t *testing.T) {
		dir := newRepo(t, map[string]string{"tasks.json": planTasks("alpha")})
		plan := planOf(t, dir, "tasks.json", "")
		r := statgraph(t, dir, "run", "-j", "1", "tasks.json")
		require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		require.NoDirExists(t, filepath.Join(plan.WorkDir(), "1"), "a published task's workspace is removed")
		gittest.Git(t, dir, "branch", "-D", plan.Branch("1"))

		r = statgraph(t, dir, "run", "-j", "1", "tasks.json")
		require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
		out := r.stdout + r.stderr
		assert.Contains(t, out, "task 1 is done but its branch "+plan.Branch("1")+" is missing")
		assert.Contains(t, out, "cannot be published again; run statgraph reset 1")
		assert.NotContains(t, out, "task 2 is done but", "task 2's branch is still there")
		assert.Regexp(t, `(?m)^2 +done +1 +[0-9]+ +\S+ +`+regexp.QuoteMeta(plan.Branch("2"))+` `, r.stdout, "the summary names the branch of a done task whose workspace is gone")
	})
}

// TestUnpublishedTaskIsNotDone: a task whose branch cannot be published
// (the repository has that branch checked out) is not reported done; it
// waits as interrupted, saying why, and is done once the branch can be
// published.
func TestUnpublishedTaskIsNotDone(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"tasks.json": `{"tasks": [{"id": 1, "title": "one", "test_cmd": "true",
  "executor": {"command": ["sh", "-c", "echo alpha > which.txt"]}}]}
`})
	plan := planOf(t, dir, "tasks.json", "")
	gittest.Git(t, dir, "checkout", "-q", "-b", plan.Branch("1"))
	r := statgraph(t, dir, "run", "tasks.json")
	require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	task := readTasks(t, filepath.Join(dir, "tasks.json"))["1"]
	assert.Equal(t, "interrupted", task.Status)
	assert.Contains(t, task.StatusReason, "could not be published")
	assert.Contains(t, task.StatusReason, "checked out")

	gittest.Git(t, dir, "checkout", "-q", "-")
	r = statgraph(t, dir, "resume", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Equal(t, "done", readTasks(t, filepath.Join(dir, "tasks.json"))["1"].Status)
	assert.Equal(t, "alpha", gittest.Git(t, dir, "show", plan.Branch("1")+":which.txt"))
}
