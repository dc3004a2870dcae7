package dispatch_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/dispatch"
)

func TestNewPlan(t *testing.T) {
	home := t.TempDir()
	t.Setenv("STATGRAPH_HOME", home)
	plan := func(repo, file, tag string) dispatch.Plan {
		t.Helper()
		p, err := dispatch.NewPlan(repo, filepath.Join(repo, file), tag)
		require.NoError(t, err)
		return p
	}
	a := plan("/src/app", "tasks.json", "")
	assert.Equal(t, dispatch.Plan{Repo: "/src/app", File: "tasks.json", Tag: "master", Key: a.Key, Dir: a.Dir}, a)
	assert.Regexp(t, `^tasks-[0-9a-f]{6}$`, a.Key)
	assert.Regexp(t, `^`+home+`/plans/app-tasks-[0-9a-f]{6}-[0-9a-f]{8}$`, a.Dir)
	assert.Equal(t, a, plan("/src/app", "tasks.json", "master"), `"" is the default tag`)
	assert.Equal(t, "statgraph/"+a.Key+"/3.1", a.Branch("3.1"))
	assert.Equal(t, a.Key+"/task-3.1", a.Thread("3.1"))
	assert.Equal(t, filepath.Join(a.Dir, "runs.db"), a.Store())

	moved := plan("/elsewhere/app", "tasks.json", "")
	assert.Equal(t, a.Key, moved.Key, "branch names do not depend on where the repository is")
	assert.NotEqual(t, a.Dir, moved.Dir, "the state does")

	for _, other := range []dispatch.Plan{
		plan("/src/app", "sub/tasks.json", ""),
		plan("/src/app", ".taskmaster/tasks/tasks.json", ""),
		plan("/src/app", "tasks.json", "feature"),
	} {
		assert.NotEqual(t, a.Key, other.Key, "%s %s", other.File, other.Tag)
		assert.NotEqual(t, a.Dir, other.Dir, "%s %s", other.File, other.Tag)
		assert.NotEqual(t, a.Thread("1"), other.Thread("1"))
		assert.NotEqual(t, a.Branch("1"), other.Branch("1"))
	}
	assert.Regexp(t, `^tasks-feature-[0-9a-f]{6}$`, plan("/src/app", "tasks.json", "feature").Key)
	out := plan("/src/app", "../shared/plan.json", "")
	assert.Equal(t, "/src/shared/plan.json", out.File, "a file outside the repository is named by its absolute path")
}

func TestPlanCheckRefusesSymlinks(t *testing.T) {
	t.Setenv("STATGRAPH_HOME", t.TempDir())
	repo := t.TempDir()
	p, err := dispatch.NewPlan(repo, filepath.Join(repo, "tasks.json"), "")
	require.NoError(t, err)
	require.NoError(t, p.Check())
	require.NoError(t, p.Ensure())
	require.NoError(t, p.Ensure(), "Ensure is idempotent")

	elsewhere := t.TempDir()
	link := filepath.Join(repo, ".statgraph")
	require.NoError(t, os.Symlink(elsewhere, link))
	err = p.Check()
	require.ErrorIs(t, err, workspace.ErrSymlink)
	assert.Contains(t, err.Error(), "git rm .statgraph")
	require.NoError(t, os.Remove(link))

	require.NoError(t, os.Rename(p.WorkDir(), p.WorkDir()+".old"))
	require.NoError(t, os.Symlink(elsewhere, p.WorkDir()))
	require.ErrorIs(t, p.Check(), workspace.ErrSymlink)
	require.ErrorIs(t, p.Ensure(), workspace.ErrSymlink)
	entries, err := os.ReadDir(elsewhere)
	require.NoError(t, err)
	assert.Empty(t, entries)
}
