package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

// stackAgent is a stand-in coding agent: statgraph runs it in the task's
// workspace as agent.sh <prompt_file> <task_id> <attempt>, and it does
// what the case for the task id says.
const stackAgent = `#!/bin/sh
prompt=$1 task=$2
case $task in
1) printf 'package greet\n\nfunc Greet(n string) string { return "hello " + n }\n' > greet.go ;;
2) printf 'package greet\n\nfunc Twice(n string) string { return Greet(n) + Greet(n) }\n' > twice.go ;;
3.1) echo one > sub1.txt ;;
3.2) echo two > sub2.txt ;;
esac
`

// TestStackedDependency: task 2 uses the function task 1 added, and a
// subtask starts from its preceding sibling's result; both are done on
// their first attempt. Before stacking, every unit started from HEAD, and
// task 2 failed with "undefined: Greet".
func TestStackedDependency(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{
		"go.mod":   "module example.com/greet\n\ngo 1.22\n",
		"doc.go":   "// Package greet greets.\npackage greet\n",
		"agent.sh": stackAgent,
		"tasks.json": `{"defaults": {"max_retries": 2, "executor": {"command": ["./agent.sh", "{prompt_file}", "{task_id}"]}},
 "tasks": [
  {"id": 1, "title": "Add Greet", "test_cmd": ["go", "vet", "./..."]},
  {"id": 2, "title": "Add Twice using Greet", "dependencies": [1], "test_cmd": ["go", "vet", "./..."]},
  {"id": 3, "title": "Two steps", "subtasks": [
    {"id": 1, "title": "Step one", "test_cmd": "test -f sub1.txt"},
    {"id": 2, "title": "Step two", "dependencies": [1], "test_cmd": "test -f sub1.txt && test -f sub2.txt"}]}
 ]}
`,
	})
	r := statgraph(t, dir, "run", "--plain", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	got := readTasks(t, filepath.Join(dir, "tasks.json"))
	assert.Equal(t, 1, got["2"].RetryCount, "task 2 is done on its first attempt: %+v", got["2"])
	assert.Equal(t, 1, got["3"].Subtasks[1].RetryCount, "subtask 3.2 sees 3.1's file on its first attempt")
	plan := planOf(t, dir, "tasks.json", "")
	files := gittest.Git(t, dir, "ls-tree", "-r", "--name-only", plan.Branch("2"))
	assert.Contains(t, files, "greet.go")
	assert.Contains(t, files, "twice.go")
	require.FileExists(t, plan.Store(), "the plan's state lives here, next to its workspaces")
	for _, id := range []string{"1", "2", "3.1", "3.2"} {
		assert.NoDirExists(t, filepath.Join(plan.WorkDir(), id), "a published task's workspace is removed")
	}
}

// mergeRepo has tasks 1 and 2 writing a.txt and b.txt (or both the same
// shared.txt when conflicting) and task 3 depending on both; agent3 is
// task 3's part of the stand-in agent.
func mergeRepo(t *testing.T, conflicting bool, agent3, test3 string, maxRetries int) string {
	t.Helper()
	f1, f2 := "a.txt", "b.txt"
	if conflicting {
		f1, f2 = "shared.txt", "shared.txt"
	}
	agent := `#!/bin/sh
prompt=$1 task=$2
case $task in
1) echo from-one > ` + f1 + ` ;;
2) echo from-two > ` + f2 + ` ;;
3) ` + agent3 + ` ;;
esac
`
	return newRepo(t, map[string]string{
		"agent.sh": agent,
		"tasks.json": `{"defaults": {"max_retries": ` + itoa(maxRetries) + `, "test_cmd": "true", "executor": {"command": ["./agent.sh", "{prompt_file}", "{task_id}"]}},
 "tasks": [
  {"id": 1, "title": "One"},
  {"id": 2, "title": "Two"},
  {"id": 3, "title": "Both", "dependencies": [1, 2], "test_cmd": ` + quote(test3) + `},
  {"id": 4, "title": "After", "dependencies": [3]}
 ]}
`,
	})
}

// TestStackedMergeAndIntegrate: task 3 depends on two independent tasks and
// starts from the merge of their branches (both files present on its first
// attempt); --integrate then publishes one branch holding every task's
// work, with the checks run on it.
func TestStackedMergeAndIntegrate(t *testing.T) {
	t.Parallel()
	dir := mergeRepo(t, false, "echo three > c.txt", "test -f a.txt && test -f b.txt", 2)
	r := statgraph(t, dir, "run", "--plain", "--integrate", "integrated", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	got := readTasks(t, filepath.Join(dir, "tasks.json"))
	assert.Equal(t, 1, got["3"].RetryCount, "task 3 passes on its first attempt: %+v", got["3"])
	plan := planOf(t, dir, "tasks.json", "")
	assert.Equal(t, "a.txt\nb.txt\nc.txt", filesOf(t, dir, plan.Branch("3")))
	assert.Equal(t, "a.txt\nb.txt\nc.txt", filesOf(t, dir, "integrated"))
	for _, id := range []string{"1", "2", "3", "4"} {
		assert.Contains(t, r.stdout, "integration: task "+id+" ("+plan.Branch(id)+") merged")
	}
	assert.Contains(t, r.stdout, "integration check tests: passed")
	assert.Contains(t, r.stdout, "integration published as branch integrated")
	first := gittest.Git(t, dir, "rev-parse", "integrated")

	r = statgraph(t, dir, "run", "--plain", "--integrate", "integrated", "tasks.json")
	require.Equal(t, 0, r.code, "integrating again adds to the branch\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Equal(t, first, gittest.Git(t, dir, "rev-parse", "integrated"), "nothing new: the branch stays where it was")
}

// TestStackedConflictResolved: tasks 1 and 2 change the same line; task 3
// gets the conflict in its prompt (paths and both sides), resolves it,
// and the checks pass.
func TestStackedConflictResolved(t *testing.T) {
	t.Parallel()
	// Branch names depend on the tasks file and tag, not on where the
	// repository is (crash_test checks it), so the stand-in agent can be
	// written before the repository exists; checked again below.
	early := planOf(t, t.TempDir(), "tasks.json", "")
	resolve := `grep -q 'shared.txt' "$prompt" && grep -q '<<<<<<< ` + early.Branch("1") + `' "$prompt" && grep -q '>>>>>>> ` + early.Branch("2") + `' "$prompt" && printf 'from-one\nfrom-two\n' > shared.txt`
	dir := mergeRepo(t, true, resolve, "grep -q from-one shared.txt && grep -q from-two shared.txt", 2)
	plan := planOf(t, dir, "tasks.json", "")
	require.Equal(t, early.Branch("1"), plan.Branch("1"))
	require.Equal(t, early.Branch("2"), plan.Branch("2"))
	r := statgraph(t, dir, "run", "--plain", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	got := readTasks(t, filepath.Join(dir, "tasks.json"))
	assert.Equal(t, 1, got["3"].RetryCount, "resolved on the first attempt: %+v", got["3"])
	assert.Equal(t, "from-one\nfrom-two", gittest.Git(t, dir, "show", plan.Branch("3")+":shared.txt"))
	parents := strings.Fields(gittest.Git(t, dir, "log", "--format=%P", "-1", plan.Branch("3")+"~1"))
	assert.Len(t, parents, 2, "task 3's branch starts from the merge of its dependencies")
}

// TestStackedConflictUnresolvedBlocks: an executor that leaves the conflict
// markers in place uses up its attempts, and the unit ends blocked with
// the conflicting path named; its dependent is blocked too. --integrate
// leaves task 2 out with the conflict named.
func TestStackedConflictUnresolvedBlocks(t *testing.T) {
	t.Parallel()
	dir := mergeRepo(t, true, "echo tried > notes.txt", "true", 2)
	r := statgraph(t, dir, "run", "--plain", "--integrate", "integrated", "tasks.json")
	require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	got := readTasks(t, filepath.Join(dir, "tasks.json"))
	assert.Equal(t, "blocked", got["3"].Status)
	assert.Contains(t, got["3"].StatusReason, "merge conflict in shared.txt")
	assert.Equal(t, 2, got["3"].RetryCount)
	assert.Contains(t, strings.Join(got["3"].ErrorHistory, "\n"), "conflicts:")
	assert.Equal(t, "blocked", got["4"].Status)
	assert.Contains(t, r.stdout, "integration: task 2 ("+planOf(t, dir, "tasks.json", "").Branch("2")+") left out: conflicts in shared.txt")
	assert.Equal(t, "from-one", gittest.Git(t, dir, "show", "integrated:shared.txt"))
}

// TestSetupCmdAndCopyFiles: setup_cmd runs once in each new workspace and
// copy_files brings an untracked file in without committing it; a missing
// file is a clear error.
func TestSetupCmdAndCopyFiles(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{
		".gitignore": ".env\ndeps/\n",
		"agent.sh":   "#!/bin/sh\necho work > work.txt\n",
		"tasks.json": `{"defaults": {"max_retries": 1, "executor": {"command": ["./agent.sh"]},
   "setup_cmd": "mkdir -p deps && echo installed >> deps/log", "copy_files": [".env"]},
 "tasks": [
  {"id": 1, "title": "Uses both", "test_cmd": "grep -q SECRET=1 .env && test \"$(cat deps/log)\" = installed"},
  {"id": 2, "title": "Missing file", "copy_files": ["missing.env"], "test_cmd": "true"}
 ]}
`,
	})
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".env"), []byte("SECRET=1\n"), 0o600))
	r := statgraph(t, dir, "run", "--plain", "--keep-workspaces", "tasks.json")
	require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	got := readTasks(t, filepath.Join(dir, "tasks.json"))
	assert.Equal(t, "done", got["1"].Status, "%+v", got["1"])
	assert.Equal(t, "failed", got["2"].Status)
	assert.Contains(t, got["2"].StatusReason, "missing.env does not exist")
	plan := planOf(t, dir, "tasks.json", "")
	assert.NotContains(t, filesOf(t, dir, plan.Branch("1")), ".env")
	assert.DirExists(t, filepath.Join(plan.WorkDir(), "1"), "--keep-workspaces keeps it")
}

// TestClean: clean removes the finished tasks' workspaces and checkpoints,
// says what it freed, and keeps the branches and tasks.json's record.
func TestClean(t *testing.T) {
	t.Parallel()
	dir := mergeRepo(t, false, "echo three > c.txt", "true", 1)
	r := statgraph(t, dir, "run", "--plain", "--keep-workspaces", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	before := readTasks(t, filepath.Join(dir, "tasks.json"))
	plan := planOf(t, dir, "tasks.json", "")
	require.DirExists(t, filepath.Join(plan.WorkDir(), "3"))
	h := statgraph(t, dir, "history", "3")
	require.Equal(t, 0, h.code, h.stderr)

	r = statgraph(t, dir, "clean", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	for _, id := range []string{"1", "2", "3", "4"} {
		assert.Contains(t, r.stdout, "task "+id+": removed its workspace (")
		assert.NoDirExists(t, filepath.Join(plan.WorkDir(), id))
	}
	assert.Contains(t, r.stdout, "deleted the checkpoints of 4 finished task(s): 1, 2, 3, 4")
	assert.Regexp(t, `freed [0-9.]+ (kB|MB)`, r.stdout)
	assert.Equal(t, before, readTasks(t, filepath.Join(dir, "tasks.json")))
	assert.Equal(t, "a.txt\nb.txt\nc.txt", filesOf(t, dir, plan.Branch("3")))
	h = statgraph(t, dir, "history", "3")
	assert.Equal(t, 2, h.code, "the checkpoints are gone")
	assert.Contains(t, h.stderr, "task 3 has no recorded run")

	r = statgraph(t, dir, "clean", "tasks.json")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "freed 0 B")
}

// TestCleanKeepCheckpoints: clean --keep-checkpoints keeps each finished
// task's last checkpoints (its history still reads, its final state
// unchanged), deletes the older ones, and compacts the run store.
func TestCleanKeepCheckpoints(t *testing.T) {
	t.Parallel()
	dir := mergeRepo(t, false, "echo three > c.txt", "true", 1)
	r := statgraph(t, dir, "run", "--plain", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	h := statgraph(t, dir, "history", "3")
	require.Equal(t, 0, h.code, h.stderr)

	r = statgraph(t, dir, "clean", "--keep-checkpoints", "1", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Regexp(t, `task 3: deleted [0-9]+ checkpoint\(s\), kept the last 1`, r.stdout)
	assert.NotContains(t, r.stdout, "deleted the checkpoints of")
	assert.Regexp(t, `compacted the run store .*: [0-9.]+ (B|kB|MB) smaller`, r.stdout)
	after := statgraph(t, dir, "history", "3")
	require.Equal(t, 0, after.code, "the kept checkpoints still read: %s", after.stderr)
	assert.Equal(t, h.stdout, after.stdout, "the final state reads the same")

	r = statgraph(t, dir, "clean", "--keep-checkpoints", "-1", "tasks.json")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "--keep-checkpoints is -1")
}

// filesOf lists the files on branch in the repository at dir, without the
// ones every test repository has.
func filesOf(t *testing.T, dir, branch string) string {
	t.Helper()
	var out []string
	for _, f := range strings.Split(gittest.Git(t, dir, "ls-tree", "-r", "--name-only", branch), "\n") {
		if f != "agent.sh" && f != "tasks.json" && f != ".gitignore" {
			out = append(out, f)
		}
	}
	return strings.Join(out, "\n")
}

func itoa(n int) string { return strconv.Itoa(n) }

func quote(s string) string {
	b := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
	return `"` + b + `"`
}

// TestIntegrationChecksSandboxed: the checks --integrate runs on the merged
// branch run model-written code too, so they are sandboxed like a task's:
// a default test_cmd that plants a hook in the user's repository (by
// absolute path) plants nothing, in the task's run or in the integration's;
// neither leaves its tool caches behind.
func TestIntegrationChecksSandboxed(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"tasks.json": "{}\n"})
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	plant := "mkdir -p " + filepath.Dir(hook) + "; echo 'echo pwned' > " + hook + "; true"
	tasksJSON := `{"defaults": {"test_cmd": ` + quote(plant) + `, "executor": {"command": ["sh", "-c", "echo one > one.txt"]}},
 "tasks": [{"id": 1, "title": "One"}]}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tasks.json"), []byte(tasksJSON), 0o644))
	gittest.Git(t, dir, "commit", "-qam", "tasks")
	r := statgraph(t, dir, "run", "--plain", "--integrate", "integrated", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "integration check tests: passed")
	assert.NoFileExists(t, hook, "a check planted a hook in the user's repository")
	caches, _ := os.ReadDir(filepath.Join(planOf(t, dir, "tasks.json", "").Dir, "cache"))
	assert.Empty(t, caches, "the task's and the integration's caches go with their workspaces")
}
