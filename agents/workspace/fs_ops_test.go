package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newFS(t *testing.T, files map[string]string, o FSOptions) (*FS, string) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	f, err := OpenFS(dir, o)
	require.NoError(t, err)
	return f, dir
}

func TestListFiles(t *testing.T) {
	f, dir := newFS(t, map[string]string{
		"b.txt": "bb", "a/x.go": "package a\n", "a/sub/y.go": "", ".git/HEAD": "ref", "a/.GIT/config": "x",
	}, FSOptions{})
	require.NoError(t, os.Symlink("b.txt", filepath.Join(dir, "link")))

	got, err := f.ListFiles("", 0)
	require.NoError(t, err)
	assert.Equal(t, []string{"a/", "a/sub/", "a/sub/y.go (0 bytes)", "a/x.go (10 bytes)", "b.txt (2 bytes)", "link -> b.txt"}, got)

	got, err = f.ListFiles("a/sub", 0)
	require.NoError(t, err)
	assert.Equal(t, []string{"a/sub/y.go (0 bytes)"}, got)

	got, err = f.ListFiles(".", 2)
	require.NoError(t, err)
	assert.Equal(t, []string{"a/", "a/sub/", "... 4 more entries not shown; list a subdirectory to see them"}, got)

	_, err = f.ListFiles("missing", 0)
	require.ErrorIs(t, err, ErrNotFound)
	assert.ErrorContains(t, err, "list missing: no such file or directory")
}

func TestReadFile(t *testing.T) {
	f, _ := newFS(t, map[string]string{
		"ok.txt":  "text\n",
		"big.txt": strings.Repeat("x", 101),
		"bin.dat": "abc\x00def",
	}, FSOptions{MaxFileSize: 100})
	for _, tc := range []struct {
		path    string
		want    string
		wantErr error
	}{
		{"ok.txt", "text\n", nil},
		{"big.txt", "", ErrTooLarge},
		{"bin.dat", "", ErrBinary},
		{"missing.txt", "", ErrNotFound},
		{"", "", ErrInvalidPath},
	} {
		t.Run(tc.path, func(t *testing.T) {
			got, err := f.ReadFile(tc.path)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	_, err := f.ReadFile("big.txt")
	assert.EqualError(t, err, "read big.txt: file is 101 bytes, over the size limit of 100 bytes; use Search to find the part you need")

	g, _ := newFS(t, map[string]string{"late": strings.Repeat("y", 9000) + "\x00"}, FSOptions{})
	got, err := g.ReadFile("late")
	require.NoError(t, err, "only the first 8 KiB decide whether a file is binary")
	assert.Len(t, got, 9001)
	_, err = g.ReadFile(".")
	require.ErrorIs(t, err, ErrIsDir)
}

func TestWriteAndDeleteFile(t *testing.T) {
	f, dir := newFS(t, map[string]string{"run.sh": "#!/bin/sh\n", "d/x": "x"}, FSOptions{MaxFileSize: 50})
	require.NoError(t, os.Chmod(filepath.Join(dir, "run.sh"), 0o755))

	require.NoError(t, f.WriteFile("new/deep/file.txt", "content\n"))
	assert.Equal(t, "content\n", readFile(t, filepath.Join(dir, "new", "deep", "file.txt")))
	require.NoError(t, f.WriteFile("run.sh", "#!/bin/sh\necho hi\n"))
	fi, err := os.Stat(filepath.Join(dir, "run.sh"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm(), "an existing file keeps its mode")

	err = f.WriteFile("big.txt", strings.Repeat("z", 51))
	require.ErrorIs(t, err, ErrTooLarge)
	assert.NoFileExists(t, filepath.Join(dir, "big.txt"))
	require.ErrorIs(t, f.WriteFile("d", "x"), ErrIsDir)

	require.NoError(t, f.DeleteFile("run.sh"))
	assert.NoFileExists(t, filepath.Join(dir, "run.sh"))
	require.ErrorIs(t, f.DeleteFile("run.sh"), ErrNotFound)
	require.ErrorIs(t, f.DeleteFile("d"), ErrIsDir)

	require.NoError(t, os.Symlink("d/x", filepath.Join(dir, "l")))
	require.NoError(t, f.DeleteFile("l"))
	assert.FileExists(t, filepath.Join(dir, "d", "x"), "deleting a link leaves its target")
}

func TestSearch(t *testing.T) {
	files := map[string]string{
		"a.go":      "package a\n\nfunc Parse() {}\nfunc parseAll() {}\n",
		"b/c.go":    "package c\n// Parse( is mentioned\n",
		"bin.dat":   "Parse\x00",
		".git/x":    "Parse\n",
		"crlf.txt":  "Parse here\r\n",
		"huge.txt":  strings.Repeat("Parse\n", 400),
		"long.txt":  "Parse" + strings.Repeat("-", 400) + "\n",
		"other.txt": "nothing\n",
	}
	f, _ := newFS(t, files, FSOptions{MaxFileSize: 1000})

	got, err := f.Search(`func [Pp]arse`, 0)
	require.NoError(t, err)
	assert.Equal(t, []string{"a.go:3: func Parse() {}", "a.go:4: func parseAll() {}"}, got)

	got, err = f.Search("Parse(", 0)
	require.NoError(t, err, "an invalid regexp is searched literally")
	assert.Equal(t, []string{"a.go:3: func Parse() {}", "b/c.go:2: // Parse( is mentioned"}, got)

	got, err = f.Search("Parse", 3)
	require.NoError(t, err)
	require.Len(t, got, 4)
	assert.Equal(t, "... 1 more matching lines not shown; use a narrower pattern", got[3], "bin.dat, .git and huge.txt are skipped")

	got, err = f.Search("here", 0)
	require.NoError(t, err)
	assert.Equal(t, []string{"crlf.txt:1: Parse here"}, got)

	got, err = f.Search("^Parse-", 0)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, fmt.Sprintf("long.txt:1: Parse%s...", strings.Repeat("-", 295)), got[0])

	got, err = f.Search("absent", 0)
	require.NoError(t, err)
	assert.Empty(t, got)
}
