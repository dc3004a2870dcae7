package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// packOf returns the one pack file in workspace dir's objects/pack.
func packOf(t *testing.T, dir string) os.FileInfo {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.pack"))
	require.NoError(t, err)
	require.Len(t, m, 1, "one pack of the source's loose objects in %s", dir)
	fi, err := os.Stat(m[0])
	require.NoError(t, err)
	return fi
}

// The source's loose objects are packed once per run: the workspaces of
// later tasks get the same pack file (a hard link, no second compression).
// A commit made meanwhile (new loose objects) gets a new pack, and once
// every workspace holding the pack is removed, the pack is written again
// from memory.
func TestPreparePacksLooseObjectsOnce(t *testing.T) {
	src := t.TempDir()
	gitRun(t, src, "init", "-q", "-b", "main")
	files := map[string]string{}
	for i := range 12 {
		files[fmt.Sprintf("f%02d.txt", i)] = fmt.Sprintf("file %d\n", i)
	}
	writeFiles(t, src, files)
	gitRun(t, src, "add", "-A")
	gitRun(t, src, "commit", "-q", "-m", "initial")
	root := t.TempDir()

	w1 := prepare(t, Options{Source: src, TaskID: "1", Root: root})
	w2 := prepare(t, Options{Source: src, TaskID: "2", Root: root})
	require.True(t, os.SameFile(packOf(t, w1.Dir()), packOf(t, w2.Dir())), "the second workspace links the first one's pack")

	writeFiles(t, src, map[string]string{"new.txt": "new\n"})
	gitRun(t, src, "add", "-A")
	gitRun(t, src, "commit", "-q", "-m", "second")
	w3 := prepare(t, Options{Source: src, TaskID: "3", Root: root})
	require.False(t, os.SameFile(packOf(t, w1.Dir()), packOf(t, w3.Dir())), "new loose objects make a new pack")
	require.Equal(t, "new\n", readFile(t, filepath.Join(w3.Dir(), "new.txt")))

	for _, w := range []*Workspace{w1, w2, w3} {
		_, err := w.Remove()
		require.NoError(t, err)
	}
	w4 := prepare(t, Options{Source: src, TaskID: "4", Root: root})
	packOf(t, w4.Dir())
	require.Equal(t, "new\n", readFile(t, filepath.Join(w4.Dir(), "new.txt")))
	gitRun(t, w4.Dir(), "fsck", "--strict")
}
