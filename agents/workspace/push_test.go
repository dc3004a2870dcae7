package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// bareRemote makes a bare repository with src's main pushed to it by git.
func bareRemote(t *testing.T, src string) string {
	t.Helper()
	remote := filepath.Join(t.TempDir(), "remote.git")
	gitRun(t, "", "init", "-q", "--bare", "-b", "main", remote)
	gitRun(t, src, "push", "-q", remote, "main")
	return remote
}

// chain makes n commits on a new branch of src, each changing a file, and
// returns main's commit followed by them.
func chain(t *testing.T, src, branch string, n int) []string {
	t.Helper()
	out := []string{gitRun(t, src, "rev-parse", "main")}
	gitRun(t, src, "checkout", "-q", "-b", branch, "main")
	for i := 1; i <= n; i++ {
		writeFiles(t, src, map[string]string{branch + ".txt": fmt.Sprintf("step %d\n", i)})
		gitRun(t, src, "commit", "-q", "-am", fmt.Sprintf("%s %d", branch, i), "--allow-empty")
		out = append(out, gitRun(t, src, "rev-parse", "HEAD"))
	}
	gitRun(t, src, "checkout", "-q", "main")
	return out
}

// remoteRef reads ref in the bare repository remote as git does (loose
// file first, then packed-refs); "" when it does not exist.
func remoteRef(t *testing.T, remote, ref string) string {
	t.Helper()
	v, err := readRef(remote, ref)
	require.NoError(t, err)
	return v
}

// fsckClean runs git fsck on remote and requires it to pass with nothing
// missing or broken.
func fsckClean(t *testing.T, remote string) {
	t.Helper()
	out := gitRun(t, remote, "fsck", "--strict", "--no-progress", "--no-dangling")
	require.Empty(t, out, "git fsck on the remote")
}

// Goroutines push to one bare remote at once, with git's own pushes going
// on: each moves the shared ref one commit further by compare-and-swap
// (so a lost update would leave it short of the end of the chain), and
// sets a ref of its own; afterwards every ref is where it must be and the
// remote passes git fsck. A packed ref is deleted: it is gone from
// packed-refs and from git's view.
func TestPushLocalConcurrentCompareAndSwap(t *testing.T) {
	src := newSource(t)
	const workers, steps = 6, 5
	c := chain(t, src, "shared", workers*steps)
	own := chain(t, src, "own", workers)
	remote := bareRemote(t, src)
	gitRun(t, src, "push", "-q", remote, "main:refs/heads/packed")
	gitRun(t, remote, "pack-refs", "--all")
	require.Contains(t, readFile(t, filepath.Join(remote, "packed-refs")), "refs/heads/packed")
	ctx := context.Background()
	const shared = "refs/heads/shared"
	require.NoError(t, PushLocal(ctx, src, remote, RefUpdate{Name: shared, New: c[0], Lease: true}))
	index := map[string]int{}
	for i, h := range c {
		index[h] = i
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers+1)
	var mu sync.Mutex
	conflicts := 0
	for g := 0; g < workers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < steps; {
				ownRef := fmt.Sprintf("refs/heads/own/%d", g)
				if err := PushLocal(ctx, src, remote, RefUpdate{Name: ownRef, New: own[g+1]}); err != nil {
					errs <- err
					return
				}
				cur := remoteRef(t, remote, shared)
				k, ok := index[cur]
				if !ok || k+1 >= len(c) {
					errs <- fmt.Errorf("shared at %q, index %d", cur, k)
					return
				}
				err := PushLocal(ctx, src, remote, RefUpdate{Name: shared, Old: cur, New: c[k+1], Lease: true})
				if errors.Is(err, ErrRefMismatch) {
					mu.Lock()
					conflicts++
					mu.Unlock()
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				done++
			}
		}()
	}
	wg.Add(1)
	go func() { // git's own pushes to the same remote meanwhile
		defer wg.Done()
		for i := 1; i <= 4; i++ {
			cmd := exec.Command("git", "push", "-q", "--force", remote, fmt.Sprintf("%s:refs/heads/cli/%d", own[i], i))
			cmd.Dir = src
			cmd.Env = testGitEnv(t.TempDir())
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("git push: %v: %s", err, out)
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, c[len(c)-1], remoteRef(t, remote, shared), "the shared ref lost an update (%d conflicts retried)", conflicts)
	for g := 0; g < workers; g++ {
		require.Equal(t, own[g+1], remoteRef(t, remote, fmt.Sprintf("refs/heads/own/%d", g)))
	}
	require.Equal(t, c[len(c)-1], gitRun(t, remote, "rev-parse", "shared"))
	fsckClean(t, remote)

	require.NoError(t, PushLocal(ctx, src, remote, RefUpdate{Name: "refs/heads/packed"}))
	require.NotContains(t, readFile(t, filepath.Join(remote, "packed-refs")), "refs/heads/packed")
	require.NotContains(t, gitRun(t, remote, "show-ref"), "refs/heads/packed")
	require.NotContains(t, gitRun(t, remote, "show-ref"), ".lock")
	fsckClean(t, remote)
	t.Logf("%d compare-and-swap conflicts retried", conflicts)
}

// An update set takes effect whole or not at all: a broken lease (on a
// ref that is there, or one that is not) leaves every ref of the set as it
// was; a published branch and the deletion of the work in progress go
// together.
func TestPushLocalAllOrNothing(t *testing.T) {
	src := newSource(t)
	c := chain(t, src, "work", 2)
	remote := bareRemote(t, src)
	ctx := context.Background()
	require.NoError(t, PushLocal(ctx, src, remote, RefUpdate{Name: "refs/heads/wip", New: c[1]}))

	err := PushLocal(ctx, src, remote,
		RefUpdate{Name: "refs/heads/done", New: c[2]},
		RefUpdate{Name: "refs/heads/wip", Old: c[0], Lease: true})
	require.ErrorIs(t, err, ErrRefMismatch)
	require.Contains(t, err.Error(), "refs/heads/wip")
	require.Equal(t, "", remoteRef(t, remote, "refs/heads/done"))
	require.Equal(t, c[1], remoteRef(t, remote, "refs/heads/wip"))

	err = PushLocal(ctx, src, remote,
		RefUpdate{Name: "refs/heads/done", New: c[2]},
		RefUpdate{Name: "refs/heads/gone", Old: c[1], Lease: true})
	require.ErrorIs(t, err, ErrRefMismatch)
	require.Equal(t, "", remoteRef(t, remote, "refs/heads/done"))

	require.NoError(t, PushLocal(ctx, src, remote,
		RefUpdate{Name: "refs/heads/done", New: c[2]},
		RefUpdate{Name: "refs/heads/wip", Old: c[1], Lease: true}))
	require.Equal(t, c[2], gitRun(t, remote, "rev-parse", "done"))
	require.Equal(t, "", remoteRef(t, remote, "refs/heads/wip"))
	entries, err := os.ReadDir(filepath.Join(remote, "refs", "heads"))
	require.NoError(t, err)
	for _, e := range entries {
		require.False(t, strings.HasSuffix(e.Name(), ".lock"), "lock left: %s", e.Name())
	}
	fsckClean(t, remote)
}

// Only a bare repository of this machine, named by a file:// URL or an
// absolute path, with no hook a push runs, is pushed to in-process; every
// other remote is git's (a sample hook, as git init writes, is no hook).
func TestLocalRemote(t *testing.T) {
	bare := filepath.Join(t.TempDir(), "r.git")
	gitRun(t, "", "init", "-q", "--bare", bare)
	work := newSource(t)
	sha256 := filepath.Join(t.TempDir(), "s.git")
	gitRun(t, "", "init", "-q", "--bare", "--object-format=sha256", sha256)
	hooked := filepath.Join(t.TempDir(), "h.git")
	gitRun(t, "", "init", "-q", "--bare", hooked)
	require.NoError(t, os.WriteFile(filepath.Join(hooked, "hooks", "pre-receive"), []byte("#!/bin/sh\nexit 0\n"), 0o755))
	hooksPath := filepath.Join(t.TempDir(), "p.git")
	gitRun(t, "", "init", "-q", "--bare", hooksPath)
	gitRun(t, hooksPath, "config", "core.hooksPath", "/etc/hooks")
	for remote, want := range map[string]bool{
		bare:                               true,
		"file://" + bare:                   true,
		"file://localhost" + bare:          true,
		work:                               false, // a work tree: git refuses pushes to its branch
		"file://" + work:                   false,
		"ssh://git@example.com/r.git":      false,
		"git@example.com:r.git":            false,
		"https://example.com/r.git":        false,
		"file://example.com" + bare:        false,
		"r.git":                            false,
		sha256:                             false,
		hooked:                             false, // git runs its hooks
		hooksPath:                          false,
		filepath.Join(t.TempDir(), "none"): false,
	} {
		got, ok := LocalRemote(remote)
		require.Equal(t, want, ok, remote)
		if want {
			require.Equal(t, bare, got, remote)
		}
	}
}

// A push without a lease replaces what the ref held when the push began,
// not whatever it holds by the time it takes the ref's lock: a ref another
// writer moved meanwhile (here while the push waited for the lock) is left
// alone, as git's receive-pack refuses a push whose advertised value is
// stale. This is what keeps a worker that stalled mid-push from
// overwriting the branch a rescuing worker published.
func TestPushLocalForceDoesNotOverwriteARefMovedMeanwhile(t *testing.T) {
	src := newSource(t)
	c := chain(t, src, "work", 3)
	remote := bareRemote(t, src)
	ctx := context.Background()
	const ref = "refs/heads/statgraph/k/1"
	require.NoError(t, PushLocal(ctx, src, remote, RefUpdate{Name: ref, New: c[1]}))
	lock := filepath.Join(remote, filepath.FromSlash(ref)) + ".lock"
	require.NoError(t, os.WriteFile(lock, nil, 0o644)) // another writer holds the ref
	done := make(chan error, 1)
	go func() { done <- PushLocal(ctx, src, remote, RefUpdate{Name: ref, New: c[3]}) }()
	// Once the push has written its objects it waits for the lock; the
	// other writer then moves the ref and lets go.
	list := filepath.Join(remote, ownPacksFile)
	for start := len(readFile(t, list)); len(readFile(t, list)) == start; {
		select {
		case err := <-done:
			t.Fatalf("the push did not wait for the lock: %v", err)
		default:
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(remote, filepath.FromSlash(ref)), []byte(c[2]+"\n"), 0o644))
	require.NoError(t, os.Remove(lock))
	err := <-done
	require.ErrorIs(t, err, ErrRefMismatch)
	require.Equal(t, c[2], remoteRef(t, remote, ref))
	fsckClean(t, remote)
}
