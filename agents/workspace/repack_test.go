package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/fsutil"
)

// packNames returns the base names of the packs in the source's
// objects/pack.
func packNames(tb testing.TB, src string) []string {
	tb.Helper()
	ents, err := os.ReadDir(filepath.Join(src, ".git", "objects", "pack"))
	require.NoError(tb, err)
	var out []string
	for _, e := range ents {
		if base, ok := strings.CutSuffix(e.Name(), ".pack"); ok {
			out = append(out, base)
		}
	}
	return out
}

// Each publish adds a pack; statgraph merges its own packs so that the
// source keeps O(log n) of them (what every open of the source pays for),
// leaves the user's pack alone, and every branch stays readable by git.
func TestPublishesKeepTheSourcesPacksFew(t *testing.T) {
	ctx := context.Background()
	src := newSource(t)
	gitRun(t, src, "gc", "-q")
	user := packNames(t, src)
	require.Len(t, user, 1, "git gc made one pack")

	root := t.TempDir()
	const n = 3 * repackAt
	tips := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4) // publishes and Prepares run concurrently, as -j does
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			w, err := Prepare(ctx, Options{Source: src, TaskID: fmt.Sprint("t", i), Root: root})
			if !assert.NoError(t, err) {
				return
			}
			defer w.Close()
			assert.NoError(t, w.FS().WriteFile(fmt.Sprintf("f%d.txt", i), fmt.Sprintf("content %d\n", i)))
			_, _, err = w.Commit(ctx, 1, fmt.Sprint("task ", i))
			if !assert.NoError(t, err) {
				return
			}
			if assert.NoError(t, w.Finish(ctx)) {
				mu.Lock()
				tips[w.Branch()] = gitRun(t, w.Dir(), "rev-parse", "HEAD")
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Len(t, tips, n)

	packs := packNames(t, src)
	assert.Contains(t, packs, user[0], "the user's pack is never merged or removed")
	// n publishes wrote n packs; merged geometrically, at most repackAt-1
	// wait for the next merge and a handful of merged ones remain.
	assert.LessOrEqual(t, len(packs), repackAt+6, "packs left after %d publishes: %v", n, packs)
	gitRun(t, src, "fsck", "--strict", "--no-dangling")
	for branch, tip := range tips {
		assert.Equal(t, tip, gitRun(t, src, "rev-parse", branch))
		gitRun(t, src, "rev-list", "--objects", "--quiet", tip)
	}
	// The list names exactly the packs statgraph wrote that are left.
	listed, stale, err := readOwnPacks(filepath.Join(src, ".git"), filepath.Join(src, ".git", "objects", "pack"))
	require.NoError(t, err)
	assert.False(t, stale, "merges drop the packs they remove from the list")
	assert.Len(t, listed, len(packs)-1)
}

func TestGeometricCut(t *testing.T) {
	sizes := func(s ...int64) []ownPack {
		var out []ownPack
		for _, x := range s {
			out = append(out, ownPack{size: x})
		}
		return out
	}
	assert.Equal(t, 16, geometricCut(sizes(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)), "equal packs merge into one")
	assert.Equal(t, 4, geometricCut(sizes(1, 1, 2, 4, 100)), "a pack over twice all smaller ones stays")
	assert.Equal(t, 5, geometricCut(sizes(1, 1, 2, 4, 9, 40)))
	assert.Equal(t, 6, geometricCut(sizes(1, 1, 2, 4, 100, 150)), "a larger pack within twice the sum takes the ones below it along")
}

// Another statgraph process reading the source (here: a shared flock on
// the lock file, as its Prepare or publish holds) keeps a merge from
// removing packs under it; the merge gives up for that time, and the
// first publish after the reader is done merges.
func TestMergeWaitsForReadersInOtherProcesses(t *testing.T) {
	ctx := context.Background()
	src := newSource(t)
	common := filepath.Join(src, ".git")
	reader, err := packsLockFile(common)
	require.NoError(t, err)
	require.NoError(t, fsutil.Flock(reader, false, false))

	root := t.TempDir()
	publish := func(i int) {
		t.Helper()
		w := prepare(t, Options{Source: src, TaskID: fmt.Sprint("t", i), Root: root})
		require.NoError(t, w.FS().WriteFile("a.txt", fmt.Sprintf("content %d\n", i)))
		_, _, err := w.Commit(ctx, 1, fmt.Sprint("task ", i))
		require.NoError(t, err)
		require.NoError(t, w.Finish(ctx))
	}
	for i := range repackAt {
		publish(i)
	}
	assert.Len(t, packNames(t, src), repackAt, "no pack is removed while another process reads the source")

	require.NoError(t, reader.Close())
	publish(repackAt)
	assert.Less(t, len(packNames(t, src)), repackAt, "the next publish merges")
	gitRun(t, src, "fsck", "--strict", "--no-dangling")
}

// A publish renames its pack into place before its index. A Prepare that
// lists the source's packs in between must not link the pack alone: go-git
// refuses a repository with a pack and no index ("packfile not found",
// about one Prepare in 400 in TestPublishesKeepTheSourcesPacksFew, where
// publishes and Prepares run at once). linkTree links a pack with its
// index, or leaves it for the publish in flight.
func TestLinkTreeLinksAPackOnlyWithItsIndex(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	for name, data := range map[string]string{
		"pack/pack-aaaa.pack": "in flight", // its index is still a temporary file
		"pack/tmp_idx_123":    "index being written",
		"pack/pack-bbbb.pack": "whole",
		"pack/pack-bbbb.idx":  "whole's index",
		"info/packs":          "P pack-bbbb.pack",
	} {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(src, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(src, name), []byte(data), 0o444))
	}
	require.NoError(t, linkTree(context.Background(), src, dst))
	assert.NoFileExists(t, filepath.Join(dst, "pack", "pack-aaaa.pack"))
	for _, name := range []string{"pack/pack-bbbb.pack", "pack/pack-bbbb.idx", "info/packs"} {
		assert.FileExists(t, filepath.Join(dst, name))
	}
}
