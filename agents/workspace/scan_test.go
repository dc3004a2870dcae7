package workspace

import (
	"context"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// looseObjects returns the loose object ids under dir/.git/objects.
func looseObjects(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	objects := filepath.Join(dir, ".git", "objects")
	err := filepath.WalkDir(objects, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(objects, p)
		if fan, rest, ok := strings.Cut(filepath.ToSlash(rel), "/"); ok && len(fan) == 2 && len(rest) == 38 {
			out[fan+rest] = true
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// allObjects returns the ids of every object, loose or packed, in dir's repository.
func allObjects(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, id := range strings.Fields(gitRun(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")) {
		out[id] = true
	}
	return out
}

// packFiles returns the pack files of dir's repository.
func packFiles(t *testing.T, dir string) []string {
	t.Helper()
	packs, err := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "pack-*.pack"))
	require.NoError(t, err)
	return packs
}

func TestCommitWritesOnlyChangedObjects(t *testing.T) {
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "o", Root: t.TempDir()})
	ctx := context.Background()
	writeFiles(t, w.Dir(), map[string]string{"x/y/z.txt": "deep\n", "x/other.txt": "other\n"})
	_, changed, err := w.Commit(ctx, 1, "add x")
	require.NoError(t, err)
	require.True(t, changed)

	before := allObjects(t, w.Dir())
	packs := packFiles(t, w.Dir())
	require.NoError(t, w.FS().WriteFile("x/y/z.txt", "deeper\n"))
	h, changed, err := w.Commit(ctx, 2, "change z")
	require.NoError(t, err)
	require.True(t, changed)
	var added []string
	for o := range allObjects(t, w.Dir()) {
		if !before[o] {
			added = append(added, o)
		}
	}
	assert.Len(t, packFiles(t, w.Dir()), len(packs)+1, "the new objects are written as one pack")
	want := []string{
		h,
		gitRun(t, w.Dir(), "rev-parse", "HEAD^{tree}"),
		gitRun(t, w.Dir(), "rev-parse", "HEAD:x"),
		gitRun(t, w.Dir(), "rev-parse", "HEAD:x/y"),
		gitRun(t, w.Dir(), "rev-parse", "HEAD:x/y/z.txt"),
	}
	assert.ElementsMatch(t, want, added, "the blob, the three trees on its path and the commit")
	assert.Empty(t, gitRun(t, w.Dir(), "status", "--porcelain"))
	gitRun(t, w.Dir(), "fsck", "--strict")
}

func TestCommitReadsOnlyChangedFiles(t *testing.T) {
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "reads", Root: t.TempDir()})
	ctx := context.Background()
	writeFiles(t, w.Dir(), map[string]string{"p/1.txt": "1\n", "p/2.txt": "2\n", "p/3.txt": "3\n"})
	// Back-date every file so none is racy for the scans below.
	old := time.Now().Add(-time.Hour)
	require.NoError(t, filepath.WalkDir(w.Dir(), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(p, string(filepath.Separator)+".git"+string(filepath.Separator)) {
			return err
		}
		return os.Chtimes(p, old, old)
	}))
	_, _, err := w.Commit(ctx, 1, "first")
	require.NoError(t, err)

	reads := w.scan.stat.reads
	_, changed, err := w.Commit(ctx, 2, "nothing")
	require.NoError(t, err)
	assert.False(t, changed)
	assert.Equal(t, reads, w.scan.stat.reads, "an unchanged tree is committed from stat alone")

	require.NoError(t, os.WriteFile(filepath.Join(w.Dir(), "p", "2.txt"), []byte("two\n"), 0o644))
	require.NoError(t, os.Chtimes(filepath.Join(w.Dir(), "p", "2.txt"), old, old))
	_, changed, err = w.Commit(ctx, 3, "two")
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, reads+1, w.scan.stat.reads, "only the changed file is read")
	assert.Equal(t, "two", gitRun(t, w.Dir(), "show", "HEAD:p/2.txt"))

	reads = w.scan.stat.reads
	_, err = w.TreeHash()
	require.NoError(t, err)
	assert.Equal(t, reads, w.scan.stat.reads, "TreeHash uses what Commit hashed")
}

func TestRacyEntriesAreNotTrusted(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.txt")
	require.NoError(t, os.WriteFile(p, []byte("same size\n"), 0o644))
	fi, err := os.Lstat(p)
	require.NoError(t, err)
	mtime := fi.ModTime().UnixNano()
	for _, tc := range []struct {
		name    string
		stamp   int64
		trusted bool
	}{
		{"changed in the tick the scan began", mtime, false},
		{"changed after the scan began", mtime - 1, false},
		{"changed before the scan began", mtime + 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c statCache
			e, data, err := c.hash(p, "f.txt", fi, tc.stamp, DefaultMaxFileBytes)
			require.NoError(t, err)
			assert.Equal(t, "same size\n", string(data))
			assert.Equal(t, !tc.trusted, e.racy)
			if tc.trusted {
				assert.Same(t, e, c.lookup("f.txt", fi))
			} else {
				assert.Nil(t, c.lookup("f.txt", fi), "a racy entry is read again even when its stat is unchanged")
			}
		})
	}
}

func TestCommitSeesRewriteWithSameSizeAndMtime(t *testing.T) {
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "racy", Root: t.TempDir()})
	ctx := context.Background()
	p := filepath.Join(w.Dir(), "a.txt")
	var first time.Time
	for i, content := range []string{"first\n", "secnd\n", "third\n"} {
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		if i == 0 {
			fi, err := os.Lstat(p)
			require.NoError(t, err)
			first = fi.ModTime()
			_, _, err = w.Commit(ctx, 1, "first")
			require.NoError(t, err)
			continue
		}
		// Same size and the same mtime as when it was hashed.
		require.NoError(t, os.Chtimes(p, first, first))
		_, changed, err := w.Commit(ctx, i+1, content)
		require.NoError(t, err)
		assert.True(t, changed, content)
		assert.Equal(t, strings.TrimSpace(content), gitRun(t, w.Dir(), "show", "HEAD:a.txt"))
	}
}

func TestCommitFollowsGitignoreAndKeepsTrackedFiles(t *testing.T) {
	src := newSource(t)
	writeFiles(t, src, map[string]string{".gitignore": "*.log\nbuild/\n", "keep.log": "tracked although ignored\n"})
	gitRun(t, src, "add", "-f", ".gitignore", "keep.log")
	gitRun(t, src, "commit", "-q", "-m", "ignores")
	w := prepare(t, Options{Source: src, TaskID: "ign", Root: t.TempDir()})
	ctx := context.Background()

	writeFiles(t, w.Dir(), map[string]string{
		"new.log": "ignored\n", "build/out.bin": "ignored dir\n", "keep.log": "tracked, changed\n",
		"dir/.gitignore": "*.tmp\n", "dir/x.tmp": "ignored below\n", "dir/x.go": "package x\n",
		".git/info/exclude": "secret.txt\n", "secret.txt": "excluded\n",
	})
	_, changed, err := w.Commit(ctx, 1, "mixed")
	require.NoError(t, err)
	require.True(t, changed)
	files := strings.Fields(gitRun(t, w.Dir(), "ls-tree", "-r", "--name-only", "HEAD"))
	assert.ElementsMatch(t, []string{".gitignore", "a.txt", "dir/.gitignore", "dir/b.txt", "dir/x.go", "keep.log"}, files)
	assert.Equal(t, "tracked, changed", gitRun(t, w.Dir(), "show", "HEAD:keep.log"))
	assert.Empty(t, gitRun(t, w.Dir(), "status", "--porcelain"), "git agrees on what is ignored and the index matches")

	// Changing a .gitignore is seen although its size may stay the same.
	require.NoError(t, w.FS().WriteFile("dir/.gitignore", "*.go\n"))
	_, changed, err = w.Commit(ctx, 2, "ignore go")
	require.NoError(t, err)
	require.True(t, changed)
	files = strings.Fields(gitRun(t, w.Dir(), "ls-tree", "-r", "--name-only", "HEAD"))
	assert.Contains(t, files, "dir/x.tmp")
	assert.Contains(t, files, "dir/x.go", "tracked files stay although now ignored")
	assert.Empty(t, gitRun(t, w.Dir(), "status", "--porcelain"))
}

func TestCommitRecordsModesLinksAndDeletions(t *testing.T) {
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "modes", Root: t.TempDir()})
	ctx := context.Background()
	writeFiles(t, w.Dir(), map[string]string{"run.sh": "#!/bin/sh\n", "empty/.keep": ""})
	require.NoError(t, os.Chmod(filepath.Join(w.Dir(), "run.sh"), 0o755))
	require.NoError(t, os.Symlink("a.txt", filepath.Join(w.Dir(), "link")))
	require.NoError(t, os.MkdirAll(filepath.Join(w.Dir(), "nothing", "inside"), 0o755))
	require.NoError(t, os.RemoveAll(filepath.Join(w.Dir(), "dir")))
	_, changed, err := w.Commit(ctx, 1, "modes")
	require.NoError(t, err)
	require.True(t, changed)
	assert.Equal(t, strings.Join([]string{
		"100644 a.txt", "100644 empty/.keep", "120000 link", "100755 run.sh",
	}, "\n"), lsTree(t, w.Dir()))
	assert.Empty(t, gitRun(t, w.Dir(), "status", "--porcelain"))

	require.NoError(t, os.Chmod(filepath.Join(w.Dir(), "run.sh"), 0o611))
	_, changed, err = w.Commit(ctx, 2, "not executable")
	require.NoError(t, err)
	require.True(t, changed, "a mode change alone is a change")
	assert.Contains(t, lsTree(t, w.Dir()), "100644 run.sh", "only the owner's execute bit counts, as for git")
	assert.Empty(t, gitRun(t, w.Dir(), "status", "--porcelain"))
	gitRun(t, w.Dir(), "fsck", "--strict")
}

// lsTree lists HEAD's files as "<mode> <path>" lines.
func lsTree(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(gitRun(t, dir, "ls-tree", "-r", "HEAD"), "\n") {
		meta, name, _ := strings.Cut(line, "\t")
		out = append(out, strings.Fields(meta)[0]+" "+name)
	}
	return strings.Join(out, "\n")
}

func TestCommitOnTopOfCommitsMadeByOtherTools(t *testing.T) {
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "cli", Root: t.TempDir()})
	ctx := context.Background()
	require.NoError(t, w.FS().WriteFile("a.txt", "by the agent's own git\n"))
	gitRun(t, w.Dir(), "commit", "-q", "-am", "agent commit")
	agent := gitRun(t, w.Dir(), "rev-parse", "HEAD")

	h, changed, err := w.Commit(ctx, 1, "nothing more")
	require.NoError(t, err)
	assert.False(t, changed)
	assert.Equal(t, agent, h)

	require.NoError(t, w.FS().WriteFile("b.txt", "ours\n"))
	h, changed, err = w.Commit(ctx, 2, "ours")
	require.NoError(t, err)
	require.True(t, changed)
	assert.Equal(t, agent, gitRun(t, w.Dir(), "rev-parse", h+"^"), "the agent's commit is the parent")
	assert.Empty(t, gitRun(t, w.Dir(), "status", "--porcelain"))
}

func TestPrepareSharesObjectsByPackOrLinks(t *testing.T) {
	t.Run("few small loose objects are packed", func(t *testing.T) {
		src := newSource(t)
		require.GreaterOrEqual(t, len(looseObjects(t, src)), packMinDirs)
		w := prepare(t, Options{Source: src, TaskID: "pack", Root: t.TempDir()})
		assert.Empty(t, looseObjects(t, w.Dir()), "no fan-out directory is made")
		packs, err := filepath.Glob(filepath.Join(w.Dir(), ".git", "objects", "pack", "pack-*.idx"))
		require.NoError(t, err)
		assert.Len(t, packs, 1)
		assert.Equal(t, "statgraph/pack", gitRun(t, w.Dir(), "rev-parse", "--abbrev-ref", "HEAD"))
		assert.Equal(t, gitRun(t, src, "rev-parse", "HEAD"), gitRun(t, w.Dir(), "rev-parse", "refs/statgraph/base"))
		assert.Empty(t, gitRun(t, w.Dir(), "status", "--porcelain"))
		gitRun(t, w.Dir(), "fsck", "--strict")
	})
	t.Run("many or large loose objects are hard-linked", func(t *testing.T) {
		src := newSource(t)
		big := make([]byte, packMaxBytes*2)
		_, err := rand.NewChaCha8([32]byte{1}).Read(big)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(src, "big.bin"), big, 0o644))
		gitRun(t, src, "add", "big.bin")
		gitRun(t, src, "commit", "-q", "-m", "big")
		w := prepare(t, Options{Source: src, TaskID: "link", Root: t.TempDir()})
		id := gitRun(t, src, "rev-parse", "HEAD:big.bin")
		rel := filepath.Join(".git", "objects", id[:2], id[2:])
		a, err := os.Stat(filepath.Join(src, rel))
		require.NoError(t, err)
		b, err := os.Stat(filepath.Join(w.Dir(), rel))
		require.NoError(t, err)
		assert.True(t, os.SameFile(a, b), "the workspace's object file is the source's, linked")
		assert.Empty(t, gitRun(t, w.Dir(), "status", "--porcelain"))
		gitRun(t, w.Dir(), "fsck", "--strict")
	})
}

func TestSubmoduleEntriesAreKept(t *testing.T) {
	src := newSource(t)
	const sub = "0123456789abcdef0123456789abcdef01234567"
	gitRun(t, src, "update-index", "--add", "--cacheinfo", "160000,"+sub+",lib/sub")
	gitRun(t, src, "commit", "-q", "-m", "add a submodule")
	w := prepare(t, Options{Source: src, TaskID: "sub", Root: t.TempDir()})
	ctx := context.Background()
	assert.DirExists(t, filepath.Join(w.Dir(), "lib", "sub"), "an empty directory, as git leaves for a submodule not initialised")
	assert.Empty(t, gitRun(t, w.Dir(), "status", "--porcelain"))

	require.NoError(t, w.FS().WriteFile("a.txt", "changed\n"))
	_, changed, err := w.Commit(ctx, 1, "change a")
	require.NoError(t, err)
	require.True(t, changed)
	assert.Equal(t, "160000 commit "+sub+"\tlib/sub", gitRun(t, w.Dir(), "ls-tree", "HEAD", "lib/sub"))
	assert.Empty(t, gitRun(t, w.Dir(), "status", "--porcelain"))

	again := prepare(t, Options{Source: src, TaskID: "sub", Root: filepath.Dir(w.Dir())})
	require.NoError(t, again.FS().WriteFile("a.txt", "changed again\n"))
	_, _, err = again.Commit(ctx, 2, "after reopening")
	require.NoError(t, err)
	assert.Equal(t, "160000 commit "+sub+"\tlib/sub", gitRun(t, again.Dir(), "ls-tree", "HEAD", "lib/sub"), "read back from the index")
}

func TestScanStampOrdersWithFileTimes(t *testing.T) {
	dir := t.TempDir()
	gitDir := filepath.Join(dir, ".git")
	require.NoError(t, os.Mkdir(gitDir, 0o755))
	mtime := func(name string) int64 {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(name), 0o644))
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		return fi.ModTime().UnixNano()
	}
	for i := range 20 {
		before := mtime("before")
		stamp, err := scanStamp(gitDir)
		require.NoError(t, err)
		after := mtime("after")
		assert.LessOrEqual(t, before, stamp, "round %d: a file written before the stamp is not after it", i)
		assert.GreaterOrEqual(t, after, stamp, "round %d: a file written after the stamp is racy or newer", i)
	}
}

func TestFinishWritesOnePackIntoTheSource(t *testing.T) {
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "fin", Root: t.TempDir()})
	ctx := context.Background()
	for i, f := range []string{"a.txt", "x/new.txt", "x/y/deep.txt"} {
		require.NoError(t, w.FS().WriteFile(f, "attempt\n"))
		_, _, err := w.Commit(ctx, i+1, f)
		require.NoError(t, err)
	}
	loose, packs := looseObjects(t, src), packFiles(t, src)
	require.NoError(t, w.Finish(ctx))
	assert.Equal(t, loose, looseObjects(t, src), "no loose object is added")
	assert.Len(t, packFiles(t, src), len(packs)+1)
	assert.Equal(t, gitRun(t, w.Dir(), "rev-parse", "HEAD"), gitRun(t, src, "rev-parse", "statgraph/fin"))
	gitRun(t, src, "fsck", "--strict")
}

func TestTreeHashSeesWhatCommitLeavesOut(t *testing.T) {
	src := newSource(t)
	writeFiles(t, src, map[string]string{".gitignore": "*.log\n"})
	gitRun(t, src, "add", ".gitignore")
	gitRun(t, src, "commit", "-q", "-m", "ignore logs")
	w := prepare(t, Options{Source: src, TaskID: "th", Root: t.TempDir()})
	hash := func() string {
		t.Helper()
		h, err := w.TreeHash()
		require.NoError(t, err)
		return h
	}
	seen := map[string]string{hash(): "start"}
	steps := []struct {
		name   string
		change func() error
	}{
		{"ignored file added", func() error { return os.WriteFile(filepath.Join(w.Dir(), "run.log"), []byte("1\n"), 0o644) }},
		{"ignored file changed", func() error { return os.WriteFile(filepath.Join(w.Dir(), "run.log"), []byte("2\n"), 0o644) }},
		{"empty directory", func() error { return os.Mkdir(filepath.Join(w.Dir(), "empty"), 0o755) }},
		{"symbolic link", func() error { return os.Symlink("a.txt", filepath.Join(w.Dir(), "link")) }},
		{"link target", func() error {
			if err := os.Remove(filepath.Join(w.Dir(), "link")); err != nil {
				return err
			}
			return os.Symlink("dir/b.txt", filepath.Join(w.Dir(), "link"))
		}},
	}
	for _, s := range steps {
		require.NoError(t, s.change(), s.name)
		h := hash()
		if prev, ok := seen[h]; ok {
			t.Errorf("%s: TreeHash %s equals the one after %q", s.name, h, prev)
		}
		seen[h] = s.name
		assert.Equal(t, h, hash(), "%s: stable while nothing changes", s.name)
	}
	_, changed, err := w.Commit(context.Background(), 1, "only the link")
	require.NoError(t, err)
	assert.True(t, changed)
	assert.NotContains(t, gitRun(t, w.Dir(), "ls-tree", "-r", "--name-only", "HEAD"), "run.log")
}

func TestCommitAfterAFailedCommitWritesEveryObject(t *testing.T) {
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "fail", Root: t.TempDir()})
	ctx := context.Background()
	head := filepath.Join(w.Dir(), ".git", "HEAD")
	good := readFile(t, head)
	require.NoError(t, w.FS().WriteFile("new/dir/file.txt", "new\n"))
	require.NoError(t, os.WriteFile(head, []byte("ref: refs/heads/statgraph/nowhere\n"), 0o644))
	_, _, err := w.Commit(ctx, 1, "fails: HEAD names no commit")
	require.Error(t, err)

	require.NoError(t, os.WriteFile(head, []byte(good), 0o644))
	_, changed, err := w.Commit(ctx, 1, "again")
	require.NoError(t, err)
	require.True(t, changed)
	assert.Equal(t, "new", gitRun(t, w.Dir(), "show", "HEAD:new/dir/file.txt"))
	gitRun(t, w.Dir(), "fsck", "--strict")
}
