package tests

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

// landAgent is the stand-in agent of the merge-queue tests: statgraph runs
// it as agent.sh <prompt_file> <task_id> <attempt>. Run as the task, it
// writes the task's file; run to land a task (the prompt says "Land this
// task"), task 3's agent leaves the conflict on its first attempt (writing
// notes.txt beside it) and resolves it on its second (removing notes.txt),
// and task 5's changes nothing.
const landAgent = `#!/bin/sh
prompt=$1 task=$2 attempt=$3
if grep -q '^Land this task' "$prompt"; then
  if [ "$task" = 3 ]; then
    if [ "$attempt" = 1 ]; then echo tried > notes.txt; else rm notes.txt; printf 'two\nthree\n' > shared.txt; fi
  fi
  exit 0
fi
case $task in
1) echo one > a.txt ;;
2) echo two > shared.txt ;;
3) echo three > shared.txt ;;
4) echo four > d.txt ;;
5) echo five > e.txt ;;
esac
`

// landRepo is a repository with five tasks for land: 2 and 3 write the
// same file (the second to land conflicts), 4 builds on 1, and 5's check
// holds on its own branch but fails once task 1 has landed.
func landRepo(t *testing.T) string {
	t.Helper()
	return newRepo(t, map[string]string{
		"agent.sh": landAgent,
		"tasks.json": `{"defaults": {"max_retries": 2, "test_cmd": "true", "executor": {"command": ["./agent.sh", "{prompt_file}", "{task_id}", "{attempt}"]}},
 "tasks": [
  {"id": 1, "title": "One", "test_cmd": "test -f a.txt"},
  {"id": 2, "title": "Two", "test_cmd": "grep -qx two shared.txt"},
  {"id": 3, "title": "Three", "test_cmd": "grep -qx three shared.txt"},
  {"id": 4, "title": "Four", "dependencies": [1], "test_cmd": "test -f a.txt && test -f d.txt"},
  {"id": 5, "title": "Five", "test_cmd": "test ! -f a.txt"}
 ]}
`,
	})
}

// TestLandQueue: five done tasks land on main one at a time. Task 3
// conflicts with task 2 on the merged tip; its agent leaves the markers
// once (main does not move to that) and resolves them on its next attempt.
// Task 5 fails its check on the merged tip, stays out with the reason, and
// status shows it. main's reflog holds only tips whose checks passed.
// Before land, no command moved main at all.
func TestLandQueue(t *testing.T) {
	t.Parallel()
	dir := landRepo(t)
	initial := gittest.Git(t, dir, "rev-parse", "main")
	r := statgraph(t, dir, "run", "--plain", "-j", "1", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)

	r = statgraph(t, dir, "land", "--onto", "main", "tasks.json")
	require.Equal(t, 2, r.code, "main is checked out: refused\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "has main checked out")
	assert.Contains(t, r.stderr, "git switch --detach")
	assert.Equal(t, initial, gittest.Git(t, dir, "rev-parse", "main"))

	gittest.Git(t, dir, "switch", "-q", "--detach")
	r = statgraph(t, dir, "land", "--onto", "main", "tasks.json")
	require.Equal(t, 1, r.code, "task 5 is not landed\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	for _, id := range []string{"1", "2", "3", "4"} {
		assert.Contains(t, r.stdout, "land: task "+id+" landed: main is at ")
	}
	assert.Contains(t, r.stdout, "land: task 5 blocked-on-checks: its checks fail on the merge with main")
	assert.Equal(t, "a.txt\nd.txt\nshared.txt", filesOf(t, dir, "main"))
	assert.Equal(t, "two\nthree", gittest.Git(t, dir, "show", "main:shared.txt"))
	assertPassingTips(t, dir, initial)

	st := statgraph(t, dir, "status", "tasks.json")
	require.Equal(t, 0, st.code, st.stderr)
	assert.Regexp(t, `(?m)^land onto main:\nTASK\s+LAND\s+NOTE\n1\s+landed`, st.stdout)
	assert.Regexp(t, `(?m)^5\s+blocked-on-checks\s+its checks fail`, st.stdout)
	js := statgraph(t, dir, "status", "--json", "tasks.json")
	var five struct {
		Land map[string]struct{ State, Reason string } `json:"land"`
	}
	lines := strings.Split(strings.TrimSpace(js.stdout), "\n")
	require.Len(t, lines, 5)
	require.NoError(t, json.Unmarshal([]byte(lines[4]), &five))
	assert.Equal(t, "blocked-on-checks", five.Land["main"].State)
	assert.Contains(t, five.Land["main"].Reason, "tests")

	// Nothing moved: landing again tries nothing and leaves main as it is.
	tip := gittest.Git(t, dir, "rev-parse", "main")
	r = statgraph(t, dir, "land", "tasks.json")
	require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "land: task 3 already landed")
	assert.Equal(t, tip, gittest.Git(t, dir, "rev-parse", "main"))
	plan := planOf(t, dir, "tasks.json", "")
	for _, id := range []string{"1", "2", "3", "4", "5"} {
		assert.NoDirExists(t, filepath.Join(plan.LandDir(), id), "a landing's workspace goes once it is over")
	}
}

// assertPassingTips checks every value main's reflog gives it after
// initial: no conflict marker, no e.txt (task 5 never lands), and each
// task's file holding what that task's check wants.
func assertPassingTips(t *testing.T, dir, initial string) {
	t.Helper()
	tips := strings.Fields(gittest.Git(t, dir, "reflog", "show", "--format=%H", "main"))
	require.GreaterOrEqual(t, len(tips), 5, "main moved once per landed task: %v", tips)
	for _, tip := range tips {
		if tip == initial {
			continue
		}
		files := strings.Fields(gittest.Git(t, dir, "ls-tree", "-r", "--name-only", tip))
		assert.NotContains(t, files, "e.txt", "task 5 never lands")
		assert.NotContains(t, files, "notes.txt", "task 3's unresolved attempt never becomes main's tip")
		for _, f := range files {
			body := gittest.Git(t, dir, "show", tip+":"+f)
			assert.NotContains(t, body, "<<<<<<<", "main at %s: %s holds a conflict marker", tip, f)
		}
	}
}

// TestLandKilled: statgraph land is killed with SIGKILL right after task
// 3's resolved merge passed its checks, before main moved; main is then at
// the tip where task 2 landed, which passed. land again finishes without
// asking the agent again (the landing's thread ended done), and a kill
// right after main moved is found from git by the next land.
func TestLandKilled(t *testing.T) {
	t.Parallel()
	dir := landRepo(t)
	r := statgraph(t, dir, "run", "--plain", "-j", "1", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	gittest.Git(t, dir, "switch", "-q", "--detach")
	initial := gittest.Git(t, dir, "rev-parse", "main")
	plan := planOf(t, dir, "tasks.json", "")

	marker := filepath.Join(t.TempDir(), "killed-checked")
	r = landKilled(t, dir, "checked 3 "+marker)
	require.Equal(t, -1, r.code, "killed\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.FileExists(t, marker)
	two := gittest.Git(t, dir, "rev-parse", "main")
	assert.Equal(t, "two", gittest.Git(t, dir, "show", "main:shared.txt"), "main is where task 2 landed")
	gittest.Git(t, dir, "merge-base", "--is-ancestor", plan.Branch("2"), "main")
	require.DirExists(t, filepath.Join(plan.LandDir(), "3"), "task 3's landing is kept to finish")
	checked := gittest.Git(t, filepath.Join(plan.LandDir(), "3"), "rev-parse", "HEAD")

	marker = filepath.Join(t.TempDir(), "killed-moved")
	r = landKilled(t, dir, "moved 4 "+marker)
	require.Equal(t, -1, r.code, "killed\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.FileExists(t, marker)
	assert.Equal(t, "two\nthree", gittest.Git(t, dir, "show", "main:shared.txt"), "task 3 landed from its checked merge")
	assert.Equal(t, "four", gittest.Git(t, dir, "show", "main:d.txt"), "main moved to task 4's merge before the kill")
	assert.NotEqual(t, two, gittest.Git(t, dir, "rev-parse", "main"))
	// Made again, the attempts would be new commits (their times differ).
	gittest.Git(t, dir, "merge-base", "--is-ancestor", checked, "main")
	assert.Equal(t, checked, gittest.Git(t, dir, "rev-parse", "main^1"), "task 4 merged onto the very merge task 3's agent resolved before the kill")

	r = statgraph(t, dir, "land", "tasks.json")
	require.Equal(t, 1, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	for _, id := range []string{"1", "2", "3", "4"} {
		assert.Contains(t, r.stdout, "land: task "+id+" already landed")
	}
	assert.Contains(t, r.stdout, "land: task 5 blocked-on-checks")
	assertPassingTips(t, dir, initial)
	st := statgraph(t, dir, "status", "tasks.json")
	assert.Regexp(t, `(?m)^4\s+landed`, st.stdout, "the record the kill lost is back")
}

// landKilled runs statgraph land with the test hook that kills it at the
// point spec names ("POINT UNIT MARKER", see dispatch/landpoint_testhooks.go);
// code -1 says it was killed.
func landKilled(t *testing.T, dir, spec string) result {
	t.Helper()
	cmd, stdout, stderr := command(t.Context(), dir, "land", "tasks.json")
	cmd.Env = append(cmd.Env, "STATGRAPH_TEST_LAND_KILL="+spec)
	err := cmd.Run()
	if ee, ok := errors.AsType[*exec.ExitError](err); ok && !ee.Exited() {
		return result{code: -1, stdout: stdout.String(), stderr: stderr.String()}
	}
	return wait(t, err, stdout, stderr)
}

// TestRunLand: run --land main refuses before running anything when main
// is checked out (tasks.json unchanged), and otherwise runs the tasks and
// lands them when the run ends.
func TestRunLand(t *testing.T) {
	t.Parallel()
	dir := mergeRepo(t, false, "echo three > c.txt", "true", 1)
	before, err := os.ReadFile(filepath.Join(dir, "tasks.json"))
	require.NoError(t, err)
	r := statgraph(t, dir, "run", "--plain", "--land", "main", "tasks.json")
	require.Equal(t, 2, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stderr, "has main checked out")
	after, err := os.ReadFile(filepath.Join(dir, "tasks.json"))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "nothing ran")

	gittest.Git(t, dir, "switch", "-q", "--detach")
	r = statgraph(t, dir, "run", "--plain", "--land", "main", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	for _, id := range []string{"1", "2", "3"} {
		assert.Contains(t, r.stdout, "land: task "+id+" landed: main is at ")
	}
	// Task 4's agent changed nothing: its branch is task 3's, landed with it.
	assert.Contains(t, r.stdout, "land: task 4 already landed")
	assert.Equal(t, "a.txt\nb.txt\nc.txt", filesOf(t, dir, "main"))
}
