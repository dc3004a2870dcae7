package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sandbox is a directory holding a workspace "ws" (with a .git directory and
// symbolic links to /etc, to a canary directory next to it, into .git and
// inside itself) and the canary directory "canary" that no operation on the
// workspace may change.
type sandbox struct {
	base, ws, canary string
}

func newSandbox(tb testing.TB, realGit bool) sandbox {
	tb.Helper()
	base := tb.TempDir()
	s := sandbox{base: base, ws: filepath.Join(base, "ws"), canary: filepath.Join(base, "canary")}
	writeFiles(tb, s.canary, map[string]string{"secret.txt": "canary a\n", "x": "canary b\n"})
	writeFiles(tb, s.ws, map[string]string{"a.txt": "hello world\n", "dir/file.txt": "one\ntwo\n"})
	if realGit {
		gitT(tb, s.ws, "init", "-q")
	}
	writeFiles(tb, s.ws, map[string]string{".git/hooks/pre-commit": "#!/bin/sh\nexit 0\n", ".git/config": "[core]\n"})
	s.restoreLinks(tb)
	return s
}

// restoreLinks (re)creates the symbolic links, which a fuzzed DeleteFile
// may legitimately remove.
func (s sandbox) restoreLinks(tb testing.TB) {
	tb.Helper()
	for name, target := range map[string]string{
		"etc":     "/etc",
		"out":     "../canary",
		"outabs":  s.canary,
		"gitlink": ".git",
		"inside":  "dir",
		"loop":    "loop",
	} {
		p := filepath.Join(s.ws, name)
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		require.NoError(tb, os.Symlink(target, p))
	}
}

// state is everything the operations must not change.
type state struct {
	canary, git map[string]string
	base, etc   []string
	passwd      string
}

func (s sandbox) state(tb testing.TB) state {
	tb.Helper()
	names := func(dir string) []string {
		entries, err := os.ReadDir(dir)
		require.NoError(tb, err)
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	return state{
		canary: snapshot(tb, s.canary),
		git:    snapshot(tb, filepath.Join(s.ws, ".git")),
		base:   names(s.base),
		etc:    names("/etc"),
		passwd: readFile(tb, "/etc/passwd"),
	}
}

// attack runs every FS operation on p and returns their errors by name.
func attack(f *FS, p string) map[string]error {
	_, readErr := f.ReadFile(p)
	_, listErr := f.ListFiles(p, 0)
	return map[string]error{
		"write":   f.WriteFile(p, "pwned\n"),
		"read":    readErr,
		"replace": f.ReplaceInFile(p, "canary", "pwned"),
		"delete":  f.DeleteFile(p),
		"list":    listErr,
	}
}

func TestFSPathSafety(t *testing.T) {
	s := newSandbox(t, true)
	f, err := OpenFS(s.ws, FSOptions{})
	require.NoError(t, err)
	before := s.state(t)

	for _, tc := range []struct {
		path string
		want error
	}{
		{"../x", ErrOutsideWorkspace},
		{"../canary/secret.txt", ErrOutsideWorkspace},
		{"a/../../x", ErrOutsideWorkspace},
		{"dir/../../canary/x", ErrOutsideWorkspace},
		{"/etc/passwd", ErrAbsolutePath},
		{s.canary + "/secret.txt", ErrAbsolutePath},
		{"a\x00b", ErrInvalidPath},
		{"a.txt\x00", ErrInvalidPath},
		{"etc/passwd", ErrOutsideWorkspace},
		{"etc/statgraph-canary", ErrOutsideWorkspace},
		{"out/secret.txt", ErrOutsideWorkspace},
		{"out/new.txt", ErrOutsideWorkspace},
		{"outabs/secret.txt", ErrOutsideWorkspace},
		{"inside/../out/x", ErrOutsideWorkspace},
		{".git/hooks/pre-commit", ErrGitDir},
		{".git/config", ErrGitDir},
		{".GIT/config", ErrGitDir},
		{".Git/hooks/new-hook", ErrGitDir},
		{"./.git/x", ErrGitDir},
		{"dir/../.git/config", ErrGitDir},
		{"sub/.git/x", ErrGitDir},
		{".git", ErrGitDir},
		{"gitlink/hooks/pre-commit", ErrGitDir},
		{"gitlink/config", ErrGitDir},
	} {
		t.Run(tc.path, func(t *testing.T) {
			for op, err := range attack(f, tc.path) {
				assert.ErrorIs(t, err, tc.want, "%s %q", op, tc.path)
				var pe *PathError
				if assert.ErrorAs(t, err, &pe, op) {
					assert.Equal(t, tc.path, pe.Path)
				}
			}
			assert.Equal(t, before, s.state(t), "nothing outside the workspace or in .git changed")
		})
	}

	t.Run("symlink loop", func(t *testing.T) {
		_, err := f.ReadFile("loop/x")
		require.ErrorContains(t, err, "too many levels of symbolic links")
	})
	t.Run("readable message", func(t *testing.T) {
		assert.EqualError(t, f.WriteFile("../x", "x"), "write ../x: path escapes the workspace; use a path relative to the workspace root")
		assert.EqualError(t, f.WriteFile("a\x00b", "x"), `write "a\x00b": path is empty or contains a NUL byte; give a file path relative to the workspace root`)
		assert.ErrorContains(t, f.WriteFile("out/new.txt", "x"), "through the symbolic link out -> ../canary")
	})
	t.Run("links inside the workspace work", func(t *testing.T) {
		got, err := f.ReadFile("inside/file.txt")
		require.NoError(t, err)
		assert.Equal(t, "one\ntwo\n", got)
	})
	assert.Equal(t, before, s.state(t))
}

func FuzzFSPath(f *testing.F) {
	for _, p := range []string{
		"../x", "/etc/passwd", "a/../../x", "a\x00b", "etc/passwd", "out/secret.txt", "outabs/x",
		".git/hooks/pre-commit", ".GIT/config", "./.git/x", "gitlink/hooks/x", "inside/../../x",
		"a.txt", "dir/new.txt", "", ".", "loop", "dir/./../out/x",
	} {
		f.Add(p)
	}
	s := newSandbox(f, false)
	fsys, err := OpenFS(s.ws, FSOptions{MaxFileSize: 1 << 10})
	require.NoError(f, err)
	before := s.state(f)
	f.Fuzz(func(t *testing.T, p string) {
		s.restoreLinks(t)
		errs := attack(fsys, p)
		if strings.Contains(p, "\x00") {
			for op, err := range errs {
				require.ErrorIs(t, err, ErrInvalidPath, op)
			}
		}
		for op, err := range errs {
			var pe *PathError
			if err != nil && !errors.As(err, &pe) {
				t.Fatalf("%s %q: error %v is not a *PathError", op, p, err)
			}
		}
		require.Equal(t, before, s.state(t), "path %q changed something outside the workspace or in .git", p)
	})
}

func TestReplaceInFile(t *testing.T) {
	for _, tc := range []struct {
		name, content, old string
		want               string // content after; "" = unchanged
		wantErr            string
	}{
		{"once", "a b c\n", "b", "a B c\n", ""},
		{"none", "a b c\n", "x", "", "found 0 times"},
		{"twice", "b b c\n", "b", "", "found 2 times"},
		{"empty old", "a\n", "", "", "it is empty"},
		{"multi-line once", "func f() {\n\treturn 1\n}\n", "\treturn 1\n", "func f() {\nB}\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"f.go": tc.content})
			f, err := OpenFS(dir, FSOptions{})
			require.NoError(t, err)
			newText := "B"
			err = f.ReplaceInFile("f.go", tc.old, newText)
			if tc.wantErr != "" {
				require.ErrorIs(t, err, ErrMatchCount)
				assert.ErrorContains(t, err, "replace in f.go: ")
				assert.ErrorContains(t, err, tc.wantErr)
				assert.Equal(t, tc.content, readFile(t, filepath.Join(dir, "f.go")))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, readFile(t, filepath.Join(dir, "f.go")))
		})
	}
	t.Run("missing file", func(t *testing.T) {
		f, err := OpenFS(t.TempDir(), FSOptions{})
		require.NoError(t, err)
		err = f.ReplaceInFile("nope.go", "a", "b")
		require.ErrorIs(t, err, ErrNotFound)
		assert.ErrorContains(t, err, "replace in nope.go: no such file")
	})
}
