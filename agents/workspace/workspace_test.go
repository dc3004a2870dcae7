package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPrepareChecksOutBranchFromHead(t *testing.T) {
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "3.2"})

	state, err := StateRoot()
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(state, "work", KeyedName(filepath.Base(src), 8, src), "3.2"), w.Dir())
	assert.Equal(t, "statgraph/3.2", w.Branch())
	assert.Equal(t, "alpha\n", readFile(t, filepath.Join(w.Dir(), "a.txt")))
	assert.Equal(t, "beta\n", readFile(t, filepath.Join(w.Dir(), "dir", "b.txt")))
	assert.Equal(t, "statgraph/3.2", gitRun(t, w.Dir(), "rev-parse", "--abbrev-ref", "HEAD"))
	assert.Equal(t, gitRun(t, src, "rev-parse", "HEAD"), gitRun(t, w.Dir(), "rev-parse", "HEAD"))
	assert.Empty(t, gitRun(t, w.Dir(), "status", "--porcelain"), "fresh workspace is clean")
	assert.Empty(t, gitRun(t, src, "status", "--porcelain", "--ignored"), "nothing is written into the source")
	gitRun(t, w.Dir(), "fsck", "--strict")
}

func TestPrepareFromBase(t *testing.T) {
	src := newSource(t)
	first := gitRun(t, src, "rev-parse", "HEAD")
	writeFiles(t, src, map[string]string{"a.txt": "second\n"})
	gitRun(t, src, "commit", "-q", "-am", "second")

	w := prepare(t, Options{Source: src, TaskID: "t1", Base: first, Root: t.TempDir()})

	assert.Equal(t, "alpha\n", readFile(t, filepath.Join(w.Dir(), "a.txt")))
	assert.Equal(t, first, gitRun(t, w.Dir(), "rev-parse", "HEAD"))

	_, err := Prepare(context.Background(), Options{Source: src, TaskID: "t2", Base: "no-such-branch", Root: t.TempDir()})
	require.ErrorContains(t, err, `base "no-such-branch"`)
}

func TestPrepareRejectsBadTaskIDs(t *testing.T) {
	src := newSource(t)
	for _, id := range []string{"", "..", "a/b", "../x", "a b", "a\x00b", "a\nb", ".hidden", "-flag", "a..b", "x.", "x.lock", strings.Repeat("x", 101)} {
		t.Run(id, func(t *testing.T) {
			_, err := Prepare(context.Background(), Options{Source: src, TaskID: id})
			require.ErrorIs(t, err, ErrInvalidTaskID)
			assert.Contains(t, err.Error(), "use letters, digits")
		})
	}
	for _, id := range []string{"3", "3.2", "3.2.1", "fix-parser_2", "A9"} {
		t.Run(id, func(t *testing.T) {
			require.NoError(t, validateTaskID(id))
		})
	}
	_, err := os.Stat(filepath.Join(src, ".statgraph"))
	assert.ErrorIs(t, err, os.ErrNotExist, "a rejected id creates nothing")
}

func TestUserDirtyTreeUntouched(t *testing.T) {
	src := newSource(t)
	gitRun(t, src, "checkout", "-q", "-b", "feature")
	writeFiles(t, src, map[string]string{"a.txt": "user's unsaved edit\n", "untracked.txt": "mine\n", "staged.txt": "staged\n"})
	gitRun(t, src, "add", "staged.txt")
	before := snapshot(t, src, ".git")
	index := readFile(t, filepath.Join(src, ".git", "index"))
	head := readFile(t, filepath.Join(src, ".git", "HEAD"))
	status := gitRun(t, src, "status", "--porcelain")

	w := prepare(t, Options{Source: src, TaskID: "7"})
	assert.Equal(t, "alpha\n", readFile(t, filepath.Join(w.Dir(), "a.txt")), "the workspace starts from the commit, not the dirty tree")
	assert.NoFileExists(t, filepath.Join(w.Dir(), "untracked.txt"))
	require.NoError(t, w.FS().WriteFile("a.txt", "agent's change\n"))
	_, _, err := w.Commit(context.Background(), 1, "change a")
	require.NoError(t, err)
	require.NoError(t, w.Finish(context.Background()))

	assert.Equal(t, before, snapshot(t, src, ".git"))
	assert.Equal(t, index, readFile(t, filepath.Join(src, ".git", "index")))
	assert.Equal(t, head, readFile(t, filepath.Join(src, ".git", "HEAD")))
	assert.Equal(t, status, gitRun(t, src, "status", "--porcelain"))
	assert.Equal(t, "feature", gitRun(t, src, "rev-parse", "--abbrev-ref", "HEAD"))
}

func TestTasksSideBySideAreIsolated(t *testing.T) {
	src := newSource(t)
	w1 := prepare(t, Options{Source: src, TaskID: "1"})
	w2 := prepare(t, Options{Source: src, TaskID: "2"})

	require.NoError(t, w1.FS().WriteFile("a.txt", "from task 1\n"))
	require.NoError(t, w1.FS().WriteFile("new1.txt", "only in 1\n"))
	_, changed, err := w1.Commit(context.Background(), 1, "task 1 work")
	require.NoError(t, err)
	require.True(t, changed)
	require.NoError(t, w2.FS().WriteFile("dir/b.txt", "from task 2\n"))

	assert.Equal(t, "alpha\n", readFile(t, filepath.Join(w2.Dir(), "a.txt")))
	assert.NoFileExists(t, filepath.Join(w2.Dir(), "new1.txt"))
	assert.Equal(t, "beta\n", readFile(t, filepath.Join(w1.Dir(), "dir", "b.txt")))
	assert.Equal(t, "statgraph/1", gitRun(t, w1.Dir(), "rev-parse", "--abbrev-ref", "HEAD"))
	assert.Equal(t, "statgraph/2", gitRun(t, w2.Dir(), "rev-parse", "--abbrev-ref", "HEAD"))
	assert.Equal(t, gitRun(t, src, "rev-parse", "HEAD"), gitRun(t, w2.Dir(), "rev-parse", "HEAD"), "task 2's branch did not move")
}

func TestCommitsPerAttemptPublishedByFinish(t *testing.T) {
	src := newSource(t)
	base := gitRun(t, src, "rev-parse", "HEAD")
	w := prepare(t, Options{Source: src, TaskID: "4.1", AuthorName: "Bot", AuthorEmail: "bot@example.com"})
	ctx := context.Background()

	require.NoError(t, w.FS().WriteFile("a.txt", "attempt one\n"))
	h1, changed, err := w.Commit(ctx, 1, "first try\n\nmore detail")
	require.NoError(t, err)
	require.True(t, changed)
	h, changed, err := w.Commit(ctx, 2, "nothing new")
	require.NoError(t, err)
	assert.False(t, changed, "no changes, no commit")
	assert.Equal(t, h1, h)
	require.NoError(t, w.FS().DeleteFile("dir/b.txt"))
	require.NoError(t, w.FS().WriteFile("c/new.txt", "new\n"))
	h2, changed, err := w.Commit(ctx, 2, "second try")
	require.NoError(t, err)
	require.True(t, changed)

	require.NoError(t, w.Finish(ctx))

	repo, err := git.PlainOpen(src)
	require.NoError(t, err)
	ref, err := repo.Reference(plumbing.NewBranchReferenceName("statgraph/4.1"), true)
	require.NoError(t, err)
	assert.Equal(t, h2, ref.Hash().String())
	c2, err := repo.CommitObject(ref.Hash())
	require.NoError(t, err)
	assert.Equal(t, "4.1: attempt 2: second try", strings.TrimSpace(c2.Message))
	assert.Equal(t, "Bot", c2.Author.Name)
	assert.Equal(t, "bot@example.com", c2.Author.Email)
	c1, err := c2.Parent(0)
	require.NoError(t, err)
	assert.Equal(t, h1, c1.Hash.String())
	assert.Equal(t, "4.1: attempt 1: first try\n\nmore detail", strings.TrimSpace(c1.Message))
	c0, err := c1.Parent(0)
	require.NoError(t, err)
	assert.Equal(t, base, c0.Hash.String())
	f, err := c2.File("c/new.txt")
	require.NoError(t, err)
	content, err := f.Contents()
	require.NoError(t, err)
	assert.Equal(t, "new\n", content)
	_, err = c2.File("dir/b.txt")
	assert.ErrorIs(t, err, object.ErrFileNotFound)
	gitRun(t, src, "fsck", "--strict")

	// A later attempt moves the published branch forward.
	require.NoError(t, w.FS().WriteFile("a.txt", "attempt three\n"))
	h3, _, err := w.Commit(ctx, 3, "third")
	require.NoError(t, err)
	require.NoError(t, w.Finish(ctx))
	assert.Equal(t, h3, gitRun(t, src, "rev-parse", "statgraph/4.1"))
}

func TestFinishRefusesToMoveUserWork(t *testing.T) {
	ctx := context.Background()
	t.Run("checked out", func(t *testing.T) {
		src := newSource(t)
		w := prepare(t, Options{Source: src, TaskID: "5", Root: t.TempDir()})
		gitRun(t, src, "checkout", "-q", "-b", "statgraph/5")
		require.NoError(t, w.FS().WriteFile("a.txt", "x\n"))
		_, _, err := w.Commit(ctx, 1, "x")
		require.NoError(t, err)
		err = w.Finish(ctx)
		require.ErrorIs(t, err, ErrBranchCheckedOut)
		assert.Equal(t, "alpha\n", readFile(t, filepath.Join(src, "a.txt")))
	})
	t.Run("diverged", func(t *testing.T) {
		src := newSource(t)
		w := prepare(t, Options{Source: src, TaskID: "6", Root: t.TempDir()})
		gitRun(t, src, "branch", "statgraph/6")
		gitRun(t, src, "checkout", "-q", "statgraph/6")
		gitRun(t, src, "commit", "-q", "--allow-empty", "-m", "user's own commit")
		userTip := gitRun(t, src, "rev-parse", "HEAD")
		gitRun(t, src, "checkout", "-q", "main")
		require.NoError(t, w.FS().WriteFile("a.txt", "x\n"))
		_, _, err := w.Commit(ctx, 1, "x")
		require.NoError(t, err)
		require.ErrorIs(t, w.Finish(ctx), ErrDiverged)
		assert.Equal(t, userTip, gitRun(t, src, "rev-parse", "statgraph/6"))
	})
}

func TestReset(t *testing.T) {
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "r"})
	ctx := context.Background()
	path := func(name string) string { return filepath.Join(w.Dir(), name) }

	require.NoError(t, w.FS().WriteFile("a.txt", "attempt 1\n"))
	require.NoError(t, w.FS().WriteFile("added1.txt", "1\n"))
	h1, _, err := w.Commit(ctx, 1, "one")
	require.NoError(t, err)
	require.NoError(t, w.FS().WriteFile("a.txt", "uncommitted\n"))
	require.NoError(t, w.FS().WriteFile("stray.txt", "stray\n"))
	require.NoError(t, w.FS().DeleteFile("dir/b.txt"))

	require.NoError(t, w.Reset(ctx, "previous"))
	assert.Equal(t, "attempt 1\n", readFile(t, path("a.txt")))
	assert.Equal(t, "beta\n", readFile(t, path("dir/b.txt")))
	assert.FileExists(t, path("added1.txt"))
	assert.NoFileExists(t, path("stray.txt"))
	assert.Equal(t, h1, gitRun(t, w.Dir(), "rev-parse", "HEAD"))

	require.NoError(t, w.Reset(ctx, "base"))
	assert.Equal(t, "alpha\n", readFile(t, path("a.txt")))
	assert.NoFileExists(t, path("added1.txt"))
	assert.Equal(t, h1, gitRun(t, w.Dir(), "rev-parse", "HEAD"), "the branch keeps the attempt")
	d, err := w.Diff(ctx)
	require.NoError(t, err)
	assert.Empty(t, d, "the tree equals the base")

	require.NoError(t, w.FS().WriteFile("b2.txt", "second\n"))
	h2, changed, err := w.Commit(ctx, 2, "two")
	require.NoError(t, err)
	require.True(t, changed)
	assert.Equal(t, h1, gitRun(t, w.Dir(), "rev-parse", "HEAD~1"))
	assert.Equal(t, h2, gitRun(t, w.Dir(), "rev-parse", "HEAD"))
	assert.Equal(t, "alpha", gitRun(t, w.Dir(), "show", "HEAD:a.txt"))
	assert.Empty(t, gitRun(t, w.Dir(), "status", "--porcelain"))

	require.ErrorContains(t, w.Reset(ctx, "HEAD~1"), `want "base" or "previous"`)
}

func TestDiffAgainstBase(t *testing.T) {
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "d"})
	ctx := context.Background()

	d, err := w.Diff(ctx)
	require.NoError(t, err)
	assert.Empty(t, d)

	require.NoError(t, w.FS().WriteFile("a.txt", "alpha\nmore\n"))
	_, _, err = w.Commit(ctx, 1, "committed part")
	require.NoError(t, err)
	require.NoError(t, w.FS().WriteFile("fresh.txt", "uncommitted\n"))
	require.NoError(t, w.FS().DeleteFile("dir/b.txt"))

	d, err = w.Diff(ctx)
	require.NoError(t, err)
	for _, want := range []string{
		"diff --git a/a.txt b/a.txt", " alpha\n+more\n",
		"diff --git a/dir/b.txt b/dir/b.txt", "deleted file mode 100644", "-beta\n",
		"diff --git a/fresh.txt b/fresh.txt", "new file mode 100644", "+uncommitted\n",
	} {
		assert.Contains(t, d, want)
	}
}

func TestTreeHash(t *testing.T) {
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "h"})
	h1, err := w.TreeHash()
	require.NoError(t, err)
	again, err := w.TreeHash()
	require.NoError(t, err)
	assert.Equal(t, h1, again, "stable while nothing changes")
	_, _, err = w.Commit(context.Background(), 1, "nothing")
	require.NoError(t, err)
	again, err = w.TreeHash()
	require.NoError(t, err)
	assert.Equal(t, h1, again, ".git is not part of the hash")

	other := prepare(t, Options{Source: src, TaskID: "h2"})
	same, err := other.TreeHash()
	require.NoError(t, err)
	assert.Equal(t, h1, same, "equal trees hash equal in different directories")

	require.NoError(t, w.FS().WriteFile("a.txt", "alphb\n"))
	h2, err := w.TreeHash()
	require.NoError(t, err)
	assert.NotEqual(t, h1, h2, "content change")
	require.NoError(t, os.Chmod(filepath.Join(w.Dir(), "a.txt"), 0o755))
	h3, err := w.TreeHash()
	require.NoError(t, err)
	assert.NotEqual(t, h2, h3, "mode change")
	require.NoError(t, os.Rename(filepath.Join(w.Dir(), "a.txt"), filepath.Join(w.Dir(), "z.txt")))
	h4, err := w.TreeHash()
	require.NoError(t, err)
	assert.NotEqual(t, h3, h4, "rename")
	assert.Len(t, h4, 64)
}

func TestReopenKeepsCommitsAndWork(t *testing.T) {
	src := newSource(t)
	ctx := context.Background()
	w := prepare(t, Options{Source: src, TaskID: "9"})
	require.NoError(t, w.FS().WriteFile("a.txt", "committed\n"))
	h1, _, err := w.Commit(ctx, 1, "one")
	require.NoError(t, err)
	require.NoError(t, w.FS().WriteFile("wip.txt", "uncommitted\n"))
	require.NoError(t, w.Close())
	_, _, err = w.Commit(ctx, 2, "after close")
	require.ErrorIs(t, err, ErrClosed)

	again := prepare(t, Options{Source: src, TaskID: "9"})
	assert.Equal(t, w.Dir(), again.Dir())
	assert.Equal(t, h1, gitRun(t, again.Dir(), "rev-parse", "HEAD"))
	assert.Equal(t, "uncommitted\n", readFile(t, filepath.Join(again.Dir(), "wip.txt")))
	require.NoError(t, again.Reset(ctx, "base"))
	d, err := again.Diff(ctx)
	require.NoError(t, err)
	assert.Empty(t, d, "the recorded base survives reopening")

	writeFiles(t, src, map[string]string{"a.txt": "source moved on\n"})
	gitRun(t, src, "commit", "-q", "-am", "moved")
	_, err = Prepare(ctx, Options{Source: src, TaskID: "9", Base: "main"})
	require.ErrorContains(t, err, "started from")
	resumed := prepare(t, Options{Source: src, TaskID: "9"})
	assert.Equal(t, h1, gitRun(t, resumed.Dir(), "rev-parse", "HEAD"), "without Base the recorded base wins")
}

func TestConcurrentUseAndCancellation(t *testing.T) {
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "c"})
	ctx := context.Background()
	done := make(chan error, 3)
	go func() {
		for i := range 5 {
			if err := w.FS().WriteFile(fmt.Sprintf("f%d.txt", i), "x\n"); err != nil {
				done <- err
				return
			}
			if _, _, err := w.Commit(ctx, i+1, "step"); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	go func() {
		for range 5 {
			if _, err := w.Diff(ctx); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	go func() {
		for range 5 {
			if _, err := w.TreeHash(); err != nil && !errors.Is(err, fs.ErrNotExist) {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for range 3 {
		require.NoError(t, <-done)
	}
	assert.Equal(t, "5", gitRun(t, w.Dir(), "rev-list", "--count", "HEAD", "^"+gitRun(t, src, "rev-parse", "HEAD")))

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := Prepare(cancelled, Options{Source: src, TaskID: "c2"})
	require.ErrorIs(t, err, context.Canceled)
	_, _, err = w.Commit(cancelled, 6, "late")
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, w.Finish(cancelled), context.Canceled)
}

func TestPrepareRefusesForeignDirectory(t *testing.T) {
	src := newSource(t)
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"8/user-file.txt": "not a workspace\n"})
	_, err := Prepare(context.Background(), Options{Source: src, TaskID: "8", Root: root})
	require.ErrorContains(t, err, "remove it or choose another Root")
	assert.Equal(t, "not a workspace\n", readFile(t, filepath.Join(root, "8", "user-file.txt")))
	leftovers, err := filepath.Glob(filepath.Join(root, ".8.prepare-*"))
	require.NoError(t, err)
	assert.Empty(t, leftovers, "the temporary clone is removed")

	_, err = Prepare(context.Background(), Options{Source: t.TempDir(), TaskID: "8"})
	require.ErrorContains(t, err, "Source must be the top directory of a git repository")
}

func TestDiffCommitShowsOneAttempt(t *testing.T) {
	src := newSource(t)
	w := prepare(t, Options{Source: src, TaskID: "dc"})
	ctx := context.Background()

	require.NoError(t, w.FS().WriteFile("a.txt", "alpha\nfirst\n"))
	h1, _, err := w.Commit(ctx, 1, "first")
	require.NoError(t, err)
	require.NoError(t, w.FS().WriteFile("second.txt", "two\n"))
	h2, _, err := w.Commit(ctx, 2, "second")
	require.NoError(t, err)

	d1, err := w.DiffCommit(ctx, h1)
	require.NoError(t, err)
	assert.Contains(t, d1, "+first\n")
	assert.NotContains(t, d1, "second.txt")
	d2, err := w.DiffCommit(ctx, h2)
	require.NoError(t, err)
	assert.Contains(t, d2, "diff --git a/second.txt b/second.txt")
	assert.NotContains(t, d2, "+first")

	_, err = w.DiffCommit(ctx, "0123456789012345678901234567890123456789")
	require.Error(t, err)
}

func TestCheckSource(t *testing.T) {
	src := newSource(t)
	head, err := CheckSource(src)
	require.NoError(t, err)
	assert.Equal(t, gitRun(t, src, "rev-parse", "HEAD"), head)

	empty := t.TempDir()
	gitRun(t, empty, "init", "-q")
	_, err = CheckSource(empty)
	require.ErrorContains(t, err, "has no HEAD commit")
	require.ErrorContains(t, err, "commit something first")

	_, err = CheckSource(t.TempDir())
	require.ErrorContains(t, err, "Source must be the top directory of a git repository")
}
