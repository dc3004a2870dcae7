package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statgraph clean knows best-of-N candidates' workspaces: after a run with
// --keep-workspaces, a task still to run keeps its candidates' workspaces,
// a done task's are removed (and counted), while its candidates' branches
// stay.
func TestCleanRemovesCandidateWorkspaces(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"tasks.json": bestOfTasks("test -f ok.txt",
		`"checks": [{"name": "style", "cmd": "false", "mode": "advisory"}], `,
		"echo ok > ok.txt", "printf 'ok\\nmore\\n' > ok.txt")})
	r := statgraph(t, dir, "run", "--keep-workspaces", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	plan := planOf(t, dir, "tasks.json", "")
	for k := 1; k <= 2; k++ {
		require.DirExists(t, filepath.Join(plan.CandidateRoot(k), "1"), "candidate %d's workspace kept by the run", k)
	}

	// Still to run: clean keeps them.
	file := filepath.Join(dir, "tasks.json")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(string(data), `"status": "done"`, `"status": "interrupted"`, 1)), 0o644))
	r = statgraph(t, dir, "clean", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	for k := 1; k <= 2; k++ {
		assert.DirExists(t, filepath.Join(plan.CandidateRoot(k), "1"), "a task still to run keeps candidate %d's workspace", k)
	}

	require.NoError(t, os.WriteFile(file, data, 0o644))
	r = statgraph(t, dir, "clean", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "task 1: removed its workspace (")
	for k := 1; k <= 2; k++ {
		assert.NoDirExists(t, filepath.Join(plan.CandidateRoot(k), "1"), "candidate %d's workspace", k)
		assert.NotEmpty(t, branchAt(t, dir, plan.CandidateBranch("1", k)), "candidate %d's branch stays", k)
	}
}
