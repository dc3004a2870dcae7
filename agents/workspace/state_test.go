package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStateRoot(t *testing.T) {
	for _, tc := range []struct {
		name, home, xdg, want string
	}{
		{"STATGRAPH_HOME wins", "/srv/sg", "/x/state", "/srv/sg"},
		{"XDG_STATE_HOME", "", "/x/state", "/x/state/statgraph"},
		{"relative XDG_STATE_HOME is ignored", "", "rel", "/h/.local/state/statgraph"},
		{"home", "", "", "/h/.local/state/statgraph"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("STATGRAPH_HOME", tc.home)
			t.Setenv("XDG_STATE_HOME", tc.xdg)
			t.Setenv("HOME", "/h")
			got, err := StateRoot()
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestKeyedName(t *testing.T) {
	a := KeyedName("tasks", 6, "tasks.json", "master")
	assert.Regexp(t, `^tasks-[0-9a-f]{6}$`, a)
	assert.Equal(t, a, KeyedName("tasks", 6, "tasks.json", "master"), "stable")
	assert.NotEqual(t, a, KeyedName("tasks", 6, "tasks.json", "feature"), "the tag is part of the key")
	assert.NotEqual(t, a, KeyedName("tasks", 6, "sub/tasks.json", "master"), "the path is part of the key")
	assert.Regexp(t, `^my-repo_x-[0-9a-f]{8}$`, KeyedName("my repo_x!", 8, "k"))
	assert.Regexp(t, `^plan-[0-9a-f]{4}$`, KeyedName("..", 4, "k"))
	assert.Regexp(t, `^x-[0-9a-f]{4}$`, KeyedName("_x", 4, "k"), "a name starts with a letter or digit, as branch and directory names must")
	require.NoError(t, validateTaskID(KeyedName("__tasks", 6, "k")))
	assert.Regexp(t, `^a{24}-[0-9a-f]{4}$`, KeyedName("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 4, "k"))
}

func TestPrepareBranchKeyedByPlan(t *testing.T) {
	src := newSource(t)
	root := t.TempDir()
	a := prepare(t, Options{Source: src, TaskID: "1", Plan: "tasks-aaaaaa", Root: filepath.Join(root, "a")})
	b := prepare(t, Options{Source: src, TaskID: "1", Plan: "other-bbbbbb", Root: filepath.Join(root, "b")})
	assert.Equal(t, "statgraph/tasks-aaaaaa/1", a.Branch())
	assert.Equal(t, BranchName("other-bbbbbb", "1"), b.Branch())
	ctx := context.Background()
	for _, w := range []*Workspace{a, b} {
		require.NoError(t, w.FS().WriteFile("a.txt", w.Branch()+"\n"))
		_, _, err := w.Commit(ctx, 1, "x")
		require.NoError(t, err)
		require.NoError(t, w.Finish(ctx))
		assert.Equal(t, w.Branch()+"\n", gitRun(t, src, "show", w.Branch()+":a.txt")+"\n")
	}
	_, err := Prepare(ctx, Options{Source: src, TaskID: "1", Plan: "../x", Root: root})
	require.ErrorIs(t, err, ErrInvalidTaskID)
}

func TestPrepareRefusesSymlinks(t *testing.T) {
	src := newSource(t)
	elsewhere := t.TempDir()
	t.Run("root", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "work")
		require.NoError(t, os.Symlink(elsewhere, root))
		_, err := Prepare(context.Background(), Options{Source: src, TaskID: "1", Root: root})
		require.ErrorIs(t, err, ErrSymlink)
		assert.Contains(t, err.Error(), root+" points to "+elsewhere)
	})
	t.Run("workspace", func(t *testing.T) {
		root := t.TempDir()
		require.NoError(t, os.Symlink(elsewhere, filepath.Join(root, "1")))
		_, err := Prepare(context.Background(), Options{Source: src, TaskID: "1", Root: root})
		require.ErrorIs(t, err, ErrSymlink)
		assert.Contains(t, err.Error(), "remove the link")
	})
	entries, err := os.ReadDir(elsewhere)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing was written through the links")
}
