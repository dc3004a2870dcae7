package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCommitRefusesGitTraps writes each name git refuses to check out (or
// fsck refuses to receive) into a workspace: Commit fails with ErrRefused
// naming the path, the branch keeps its commit, and what Finish then
// publishes is one the user's git checks out and fscks cleanly. Before
// the refusal, each was committed and published.
func TestCommitRefusesGitTraps(t *testing.T) {
	hook := "#!/bin/sh\necho pwned > /tmp/statgraph-gittrap\n"
	for _, tc := range []struct {
		name  string
		path  string // what the error names
		files map[string]string
		link  [2]string // a symbolic link to make: name, target
	}{
		{name: "trailing space", path: ".git /", files: map[string]string{".git /hooks/post-checkout": hook}},
		{name: "trailing dot", path: ".git./", files: map[string]string{".git./hooks/post-checkout": hook}},
		{name: "dots and spaces", path: ".Git. ./", files: map[string]string{".Git. ./config": "[core]\n"}},
		{name: "NTFS short name", path: "git~1/", files: map[string]string{"git~1/hooks/post-checkout": hook}},
		{name: "NTFS short name upper case", path: "GIT~1/", files: map[string]string{"GIT~1/config": "[core]\n"}},
		{name: "NTFS data stream", path: ".git::$INDEX_ALLOCATION/", files: map[string]string{".git::$INDEX_ALLOCATION/config": "[core]\n"}},
		{name: "NTFS backslash", path: `sub\.git`, files: map[string]string{`sub\.git`: "x\n"}},
		{name: "nested", path: "dir/.git./", files: map[string]string{"dir/.git./config": "[core]\n"}},
		{name: "HFS zero-width joiner", path: ".g\u200dit/", files: map[string]string{".g\u200dit/config": "[core]\n"}},
		{name: "HFS byte order mark", path: "\ufeff.GIT/", files: map[string]string{"\ufeff.GIT/config": "[core]\n"}},
		{name: "gitmodules upload-pack url", path: ".gitmodules", files: map[string]string{
			".gitmodules": "[submodule \"x\"]\n\tpath = x\n\turl = --upload-pack=touch /tmp/statgraph-gittrap\n"}},
		{name: "gitmodules option path", path: ".gitmodules", files: map[string]string{
			".gitmodules": "[submodule \"x\"]\n\tpath = -x\n\turl = https://example.com/x\n"}},
		{name: "gitmodules NTFS alias", path: ".gitmodules.", files: map[string]string{
			".gitmodules.": "[submodule \"x\"]\n\tpath = x\n\turl = -u\n"}},
		{name: "gitmodules update command", path: "sub/.gitmodules", files: map[string]string{
			"sub/.gitmodules": "[submodule \"x\"]\n\tpath = x\n\tupdate = !sh -c pwned\n"}},
		{name: "gitmodules symlink", path: ".gitmodules", link: [2]string{".gitmodules", "a.txt"}},
		{name: "gitmodules short name symlink", path: "GITMOD~1", link: [2]string{"GITMOD~1", "a.txt"}},
		{name: "control character", path: "ctl\x01name", files: map[string]string{"ctl\x01name": "x\n"}},
		{name: "escape sequence", path: "esc\x1b]52;c;aGk=\x07", files: map[string]string{"esc\x1b]52;c;aGk=\x07": "x\n"}},
		{name: "DEL", path: "dir/del\x7f", files: map[string]string{"dir/del\x7f": "x\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			src := newSource(t)
			w := prepare(t, Options{Source: src, TaskID: "t", Root: t.TempDir()})
			before := gitRun(t, w.Dir(), "rev-parse", "HEAD")
			writeFiles(t, w.Dir(), tc.files)
			if tc.link[0] != "" {
				require.NoError(t, os.Symlink(tc.link[1], filepath.Join(w.Dir(), tc.link[0])))
			}
			_, _, err := w.Commit(ctx, 1, "plant a trap")
			require.ErrorIs(t, err, ErrRefused)
			assert.Contains(t, err.Error(), strconv.Quote(tc.path))
			assert.Equal(t, before, gitRun(t, w.Dir(), "rev-parse", "HEAD"), "nothing committed")
			// The refusal holds on the next try too: the caches were reset.
			_, _, err = w.Commit(ctx, 2, "again")
			require.ErrorIs(t, err, ErrRefused)

			require.NoError(t, w.Finish(ctx))
			names := gitRun(t, src, "ls-tree", "-r", "-z", "--name-only", w.Branch())
			assert.ElementsMatch(t, []string{"a.txt", "dir/b.txt"}, strings.Split(strings.TrimRight(names, "\x00"), "\x00"))
			gitRun(t, src, "fsck", "--full", "--strict")
			clone := filepath.Join(t.TempDir(), "clone")
			gitRun(t, src, "clone", "-q", "--no-checkout", src, clone)
			gitRun(t, clone, "checkout", "-q", w.Branch())
		})
	}
}

// TestCommitRefusesADotGitInAnyCase: a directory called .git in any
// letter case is never recorded (as git add leaves an embedded
// repository's .git out), so it cannot reach the branch either.
func TestCommitLeavesOutDotGitInAnyCase(t *testing.T) {
	ctx := context.Background()
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "t", Root: t.TempDir()})
	writeFiles(t, w.Dir(), map[string]string{".GIT/config": "[core]\n", "sub/.Git/hooks/x": "x\n", "new.txt": "new\n"})
	_, changed, err := w.Commit(ctx, 1, "add")
	require.NoError(t, err)
	require.True(t, changed)
	names := gitRun(t, w.Dir(), "ls-tree", "-r", "--name-only", "HEAD")
	assert.Equal(t, "a.txt\ndir/b.txt\nnew.txt", names)
}

// TestDiffShowsControlCharacterNames: a commit holding a name with a
// control character, as an agent CLI's own git commit can make, shows in
// DiffCommit and Diff with the name quoted as git quotes it, and the other
// files' changes with it; go-git's own patch showed no diff at all.
func TestDiffShowsControlCharacterNames(t *testing.T) {
	ctx := context.Background()
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "t", Root: t.TempDir()})
	writeFiles(t, w.Dir(), map[string]string{"ctl\x01name.txt": "new\n", "a.txt": "alpha\nbeta\n"})
	gitRun(t, w.Dir(), "add", "-A")
	gitRun(t, w.Dir(), "commit", "-q", "-m", "the agent's own commit")
	hash := gitRun(t, w.Dir(), "rev-parse", "HEAD")

	d, err := w.DiffCommit(ctx, hash)
	require.NoError(t, err)
	assert.Contains(t, d, "diff --git \"a/ctl\\001name.txt\" \"b/ctl\\001name.txt\"\nnew file mode 100644\n")
	assert.Contains(t, d, "--- /dev/null\n+++ \"b/ctl\\001name.txt\"\n@@ -0,0 +1 @@\n+new\n")
	assert.Contains(t, d, "diff --git a/a.txt b/a.txt\n")
	assert.Contains(t, d, "+beta\n")
	// git itself shows the same header lines.
	shown := gitRun(t, w.Dir(), "-c", "core.quotePath=true", "show", "--format=", hash)
	assert.Contains(t, shown, "diff --git \"a/ctl\\001name.txt\" \"b/ctl\\001name.txt\"\nnew file mode 100644\n")
	assert.Contains(t, shown, "+++ \"b/ctl\\001name.txt\"\n")

	// The working tree still holds the name: Diff refuses it, as Commit does.
	_, err = w.Diff(ctx)
	require.ErrorIs(t, err, ErrRefused)
	require.NoError(t, os.Remove(filepath.Join(w.Dir(), "ctl\x01name.txt")))
	d, err = w.Diff(ctx)
	require.NoError(t, err)
	assert.Equal(t, "diff --git a/a.txt b/a.txt\n", strings.SplitAfter(d, "\n")[0])
}

// TestCommitCaps: a file over MaxFileBytes (a sparse one, never read), and
// more new or changed files or bytes than MaxCommitFiles and
// MaxCommitBytes, are refused naming the file; what the last commit holds
// does not count again, so a commit under the caps after one over them
// goes through.
func TestCommitCaps(t *testing.T) {
	ctx := context.Background()
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "t", Root: t.TempDir(), MaxFileBytes: 1 << 20, MaxCommitFiles: 3, MaxCommitBytes: 100})

	big := filepath.Join(w.Dir(), "big.bin")
	require.NoError(t, os.WriteFile(big, nil, 0o644))
	require.NoError(t, os.Truncate(big, 64<<20))
	_, _, err := w.Commit(ctx, 1, "big")
	require.ErrorIs(t, err, ErrRefused)
	assert.Contains(t, err.Error(), `"big.bin": the file is 64.0 MiB, over the cap of 1.0 MiB per file (limits.file_bytes in tasks.json)`)
	tree, err := w.TreeHash()
	require.NoError(t, err, "TreeHash streams a file over the cap")
	assert.Len(t, tree, 64)
	require.NoError(t, os.Remove(big))

	writeFiles(t, w.Dir(), map[string]string{"n/1": "1", "n/2": "2", "n/3": "3", "n/4": "4"})
	_, _, err = w.Commit(ctx, 1, "four")
	require.ErrorIs(t, err, ErrRefused)
	assert.Contains(t, err.Error(), `"n/4": the attempt adds or changes more than 3 files, the cap per attempt (limits.write_files in tasks.json)`)
	require.NoError(t, os.Remove(filepath.Join(w.Dir(), "n/4")))
	_, changed, err := w.Commit(ctx, 1, "three")
	require.NoError(t, err)
	require.True(t, changed)

	writeFiles(t, w.Dir(), map[string]string{"a.txt": strings.Repeat("a", 101)})
	_, _, err = w.Commit(ctx, 2, "bytes")
	require.ErrorIs(t, err, ErrRefused)
	assert.Contains(t, err.Error(), `"a.txt": the attempt's new or changed files pass 100 bytes, the cap per attempt (limits.write_bytes in tasks.json)`)
	writeFiles(t, w.Dir(), map[string]string{"a.txt": "short\n", "n/5": "5", "n/6": "6"})
	_, changed, err = w.Commit(ctx, 2, "three more, the first three unchanged")
	require.NoError(t, err)
	require.True(t, changed)
}

// TestAgentCommitsAreChecked: an agent CLI that commits a trap with git
// itself and removes it from the working tree leaves it in the branch's
// history; Commit and Finish refuse the branch naming the path and the
// commit, and nothing reaches the source. Before, the commit was
// published and the source failed git fsck.
func TestAgentCommitsAreChecked(t *testing.T) {
	ctx := context.Background()
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "t", Root: t.TempDir()})
	_, _, err := w.Commit(ctx, 1, "nothing yet")
	require.NoError(t, err)
	writeFiles(t, w.Dir(), map[string]string{"ok.txt": "fine\n"})
	gitRun(t, w.Dir(), "add", "-A")
	gitRun(t, w.Dir(), "commit", "-q", "-m", "a clean commit of the agent")
	writeFiles(t, w.Dir(), map[string]string{".gitmodules": "[submodule \"x\"]\n\tpath = x\n\turl = --upload-pack=touch /tmp/statgraph-gittrap\n"})
	gitRun(t, w.Dir(), "add", "-A")
	gitRun(t, w.Dir(), "commit", "-q", "-m", "the agent's trap")
	gitRun(t, w.Dir(), "rm", "-q", ".gitmodules")
	gitRun(t, w.Dir(), "commit", "-q", "-m", "hide it")

	_, _, err = w.Commit(ctx, 2, "attempt")
	require.ErrorIs(t, err, ErrRefused)
	assert.Contains(t, err.Error(), `".gitmodules": submodule "x" has url "--upload-pack=touch /tmp/statgraph-gittrap"`)
	assert.Contains(t, err.Error(), `"the agent's trap", made in the workspace`)
	require.ErrorIs(t, w.Finish(ctx), ErrRefused)
	assert.Empty(t, gitRunAllowFail(src, "branch", "--list", w.Branch()), "nothing published")
	gitRun(t, src, "fsck", "--full", "--strict")
}

// gitRunAllowFail runs git in dir and returns its trimmed output, "" when
// it fails.
func gitRunAllowFail(dir string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// TestCommitKeepsTheUsersLargeFile: a file over the cap that the base
// already holds is not refused while it stays as it is; changed, it is.
func TestCommitKeepsTheUsersLargeFile(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	gitRun(t, src, "init", "-q", "-b", "main")
	writeFiles(t, src, map[string]string{"big.dat": strings.Repeat("x", 4096), "a.txt": "a\n"})
	gitRun(t, src, "add", "-A")
	gitRun(t, src, "commit", "-q", "-m", "initial")
	w := prepare(t, Options{Source: src, TaskID: "t", Root: t.TempDir(), MaxFileBytes: 1024})
	writeFiles(t, w.Dir(), map[string]string{"a.txt": "b\n"})
	_, changed, err := w.Commit(ctx, 1, "small change")
	require.NoError(t, err)
	require.True(t, changed)
	writeFiles(t, w.Dir(), map[string]string{"big.dat": strings.Repeat("y", 4096)})
	_, _, err = w.Commit(ctx, 2, "big change")
	require.ErrorIs(t, err, ErrRefused)
	assert.Contains(t, err.Error(), `"big.dat": the file is 4.0 KiB, over the cap of 1.0 KiB per file`)
}
