package tests

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

// TestUserEditDuringRun edits tasks.json while a run works on it, as a
// person would in an editor: first a half-written file (statgraph must not
// write over it), then a valid version that adds task 3, retitles task 2,
// edits the description of the running task 1 and adds a field of the
// user's own. Every edit is kept, the added task runs, and the output says
// what happened. The stand-in agents and checks talk with the test
// through mark files in the test's temporary directory; the sandbox gives
// them a private /tmp, so the run passes --no-sandbox (the sandbox is not
// what this test is about).
func TestUserEditDuringRun(t *testing.T) {
	t.Parallel()
	marks := t.TempDir()
	// gated waits for the test's go-<id> file; quick just leaves a mark.
	gated := fmt.Sprintf(`["sh", "-c", "touch '%[1]s'/started-$0; n=0; while [ ! -e '%[1]s'/go-$0 ] && [ $n -lt 600 ]; do sleep 0.05; n=$((n+1)); done", "{task_id}"]`, marks)
	quick := fmt.Sprintf(`["sh", "-c", "touch '%s'/ran-$0", "{task_id}"]`, marks)
	original := fmt.Sprintf(`{
  "tasks": [
    {"id": 1, "title": "Slow one", "description": "as planned", "executor": {"command": %[1]s}, "test_cmd": "true"},
    {"id": 2, "title": "After one", "dependencies": [1], "executor": {"command": %[2]s}, "test_cmd": "true"},
    {"id": 4, "title": "Side job", "executor": {"command": %[1]s}, "test_cmd": "touch '%[3]s'/verified-4"}
  ]
}
`, gated, quick, marks)
	repo := newRepo(t, map[string]string{"README": "edits\n", "tasks.json": original})
	path := filepath.Join(repo, "tasks.json")
	waitFile := func(name string) {
		t.Helper()
		require.Eventually(t, func() bool { return fileExists(filepath.Join(marks, name)) }, 30*time.Second, 20*time.Millisecond, "waiting for %s", name)
	}
	touch := func(name string) { require.NoError(t, os.WriteFile(filepath.Join(marks, name), nil, 0o644)) }

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, stdout, _ := command(ctx, repo, "run", "--plain", "--no-sandbox", "-j", "3", "tasks.json")
	var stderr lockedBuffer // read while the run writes it
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	waitFile("started-1")
	waitFile("started-4")

	// Half-way through an edit: not JSON. Task 4 finishing makes statgraph
	// save; it must leave these bytes alone.
	current, err := os.ReadFile(path)
	require.NoError(t, err)
	half := current[:len(current)/2]
	require.NoError(t, os.WriteFile(path, half, 0o644))
	touch("go-4")
	waitFile("verified-4")
	// The save after task 4 is due only after the saver's gap, 19 times
	// the last save's duration (seconds on a loaded machine): its note
	// says it happened and held off.
	for !strings.Contains(stderr.String(), "cannot be read") {
		select {
		case <-ctx.Done():
			t.Fatalf("statgraph did not report the half-written file\nstderr:\n%s", stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	now, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(half), string(now), "statgraph wrote over a file the user is editing")

	// The finished edit, made on the file as statgraph last wrote it.
	edited := strings.Replace(string(current), `"title": "After one"`, `"title": "After one, retitled"`, 1)
	edited = strings.Replace(edited, `"description": "as planned"`, `"description": "edited mid-run"`, 1)
	edited = strings.Replace(edited, `"title": "Side job"`, `"title": "Side job", "owner": "me"`, 1)
	added := fmt.Sprintf(`"tasks": [
    {"id": 3, "title": "Added mid-run", "dependencies": [1], "executor": {"command": %s}, "test_cmd": "true"},`, quick)
	edited = strings.Replace(edited, `"tasks": [`, added, 1)
	require.NotEqual(t, string(current), edited)
	require.NoError(t, os.WriteFile(path, []byte(edited), 0o644))
	touch("go-1")

	r := wait(t, cmd.Wait(), stdout, bytes.NewBufferString(stderr.String()))
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.FileExists(t, filepath.Join(marks, "ran-3"), "the task added mid-run ran")
	final, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, want := range []string{`"After one, retitled"`, `"edited mid-run"`, `"owner": "me"`, `"Added mid-run"`} {
		assert.Contains(t, string(final), want, "the user's edit is kept")
	}
	ts := readTasks(t, path)
	for _, id := range []string{"1", "2", "3", "4"} {
		assert.Equal(t, "done", ts[id].Status, "task %s\n%s", id, final)
	}
	out := r.stdout + r.stderr
	assert.Contains(t, out, "cannot be read", "the half-written file is reported")
	assert.Contains(t, out, "task 1 was edited", "the edit of the running task is reported")
}

// TestUserAddedTaskStacks: a task the user adds during a run, depending on
// a task of that run, starts from that task's published branch like any
// other dependent task (its dependencies are read from the file as it is
// when the task starts, not as it was when the run began).
func TestUserAddedTaskStacks(t *testing.T) {
	t.Parallel()
	marks := t.TempDir()
	gated := fmt.Sprintf(`["sh", "-c", "echo one > one.txt; touch '%[1]s'/started-1; n=0; while [ ! -e '%[1]s'/go-1 ] && [ $n -lt 600 ]; do sleep 0.05; n=$((n+1)); done"]`, marks)
	original := fmt.Sprintf(`{"tasks": [{"id": 1, "title": "One", "executor": {"command": %s}, "test_cmd": "test -f one.txt"}]}
`, gated)
	repo := newRepo(t, map[string]string{"tasks.json": original})
	path := filepath.Join(repo, "tasks.json")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The gate is a file in the test's temporary directory, which the
	// sandbox's private /tmp hides: the sandbox is not what this tests.
	cmd, stdout, stderr := command(ctx, repo, "run", "--plain", "--no-sandbox", "tasks.json")
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool { return fileExists(filepath.Join(marks, "started-1")) }, 30*time.Second, 20*time.Millisecond)
	added := fmt.Sprintf(`{"tasks": [{"id": 1, "title": "One", "executor": {"command": %s}, "test_cmd": "test -f one.txt"},
  {"id": 3, "title": "Added", "dependencies": [1], "executor": {"command": ["sh", "-c", "test -f one.txt && echo three > three.txt"]}, "test_cmd": "test -f three.txt"}]}
`, gated)
	require.NoError(t, os.WriteFile(path, []byte(added), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(marks, "go-1"), nil, 0o644))
	err := cmd.Wait()
	require.NoError(t, err, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	got := readTasks(t, path)
	assert.Equal(t, "done", got["3"].Status, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	assert.Equal(t, 1, got["3"].RetryCount, "the added task saw task 1's work on its first attempt")
	assert.Equal(t, "one.txt\ntasks.json\nthree.txt", strings.Join(strings.Fields(gittest.Git(t, repo, "ls-tree", "-r", "--name-only", planOf(t, repo, "tasks.json", "").Branch("3"))), "\n"))
}
