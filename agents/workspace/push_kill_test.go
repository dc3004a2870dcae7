//go:build linux

package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The environment that turns this test binary into a pushing child:
// TestPushLocalChild pushes the updates it names with PushLocal.
const (
	pushFromEnv    = "STATGRAPH_TEST_PUSHCHILD_FROM"
	pushRemoteEnv  = "STATGRAPH_TEST_PUSHCHILD_REMOTE"
	pushUpdatesEnv = "STATGRAPH_TEST_PUSHCHILD_UPDATES" // name=new;name=;... ("": a deletion)
	pushKillEnv    = "STATGRAPH_TEST_PUSHCHILD_KILL"    // POINT MARKER
)

// TestPushLocalChild is the body of the child process of
// TestPushLocalSurvivesKill9AtEachPoint; run normally it does nothing. The
// child creates MARKER and kills itself at the POINT pushKillEnv names.
func TestPushLocalChild(t *testing.T) {
	from := os.Getenv(pushFromEnv)
	if from == "" {
		return
	}
	point, marker, _ := strings.Cut(os.Getenv(pushKillEnv), " ")
	pushPoint = func(p string, _ []RefUpdate) {
		if p == point {
			if f, err := os.OpenFile(marker, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
				f.Close()
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
	}
	var ups []RefUpdate
	for _, u := range strings.Split(os.Getenv(pushUpdatesEnv), ";") {
		name, val, _ := strings.Cut(u, "=")
		ups = append(ups, RefUpdate{Name: name, New: val})
	}
	if err := PushLocal(context.Background(), from, os.Getenv(pushRemoteEnv), ups...); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	os.Exit(0)
}

// A process publishing a unit in process (PushLocal: its branch and a
// stacked base set, its work-in-progress branch deleted, as a queue worker
// does) is kill -9'd at each point of the push, with the work in progress
// a loose ref and a packed one. After each kill the remote passes git fsck
// --strict; the published branch is either absent, with the work in
// progress intact, or at the unit's commit: the work is never lost. The
// same push again then completes it (the locks the killed push held are
// removed; git would wait on them for ever) and leaves no lock file.
func TestPushLocalSurvivesKill9AtEachPoint(t *testing.T) {
	const (
		branch = "refs/heads/statgraph/k/1"
		base   = "refs/heads/statgraph/k/0"
		wip    = "refs/heads/statgraph-wip/k/1"
	)
	points := []string{"pack-written", "pack-recorded", "locked", "written", "renamed-1", "renamed-2",
		"packed-refs-rewritten", "deleted-1", "refs-updated"}
	for _, packed := range []bool{false, true} {
		for _, point := range points {
			if point == "packed-refs-rewritten" && !packed {
				continue // a loose ref's deletion leaves packed-refs alone
			}
			t.Run(fmt.Sprintf("packed=%v/%s", packed, point), func(t *testing.T) {
				src := newSource(t)
				work := chain(t, src, "work", 2) // main, the work in progress, the unit's commit
				dep := chain(t, src, "dep", 1)[1]
				remote := bareRemote(t, src)
				gitRun(t, src, "push", "-q", remote, work[1]+":"+wip)
				if packed {
					gitRun(t, remote, "pack-refs", "--all")
				}
				updates := []RefUpdate{{Name: wip}, {Name: base, New: dep}, {Name: branch, New: work[2]}}
				var spec []string
				for _, u := range updates {
					spec = append(spec, u.Name+"="+u.New)
				}
				marker := filepath.Join(t.TempDir(), "killed")
				cmd := exec.Command(os.Args[0], "-test.run=^TestPushLocalChild$", "-test.count=1")
				cmd.Env = append(os.Environ(), pushFromEnv+"="+src, pushRemoteEnv+"="+remote,
					pushUpdatesEnv+"="+strings.Join(spec, ";"),
					pushKillEnv+"="+point+" "+marker)
				out, err := cmd.CombinedOutput()
				var ee *exec.ExitError
				require.True(t, errors.As(err, &ee), "the child was not killed (%v): %s", err, out)
				ws := ee.Sys().(syscall.WaitStatus)
				require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL, "the child ended with %v: %s", err, out)
				require.FileExists(t, marker)

				fsckClean(t, remote)
				pub, w, b := remoteRef(t, remote, branch), remoteRef(t, remote, wip), remoteRef(t, remote, base)
				t.Logf("after the kill: branch %q, work in progress %q, base %q", short(pub), short(w), short(b))
				require.Contains(t, []string{"", work[2]}, pub, "the published branch")
				require.Contains(t, []string{"", dep}, b, "the stacked base")
				if pub == "" {
					require.Equal(t, work[1], w, "the work in progress is gone without the branch")
				} else {
					require.Contains(t, []string{"", work[1]}, w)
				}
				// git reads every ref (a half-written one would fail here).
				gitRun(t, remote, "for-each-ref")

				require.NoError(t, PushLocal(context.Background(), src, remote, updates...), "the push after the kill")
				require.Equal(t, work[2], remoteRef(t, remote, branch))
				require.Equal(t, dep, remoteRef(t, remote, base))
				require.Empty(t, remoteRef(t, remote, wip))
				fsckClean(t, remote)
				assert.Empty(t, lockFiles(t, remote), "lock files left on the remote")
				left, _ := os.ReadDir(filepath.Join(remote, locksDir))
				assert.Empty(t, left, "journal files left on the remote")
				// git's own push goes through (no lock left in its way).
				gitRun(t, src, "push", "-q", "--force", remote, work[1]+":"+branch)
			})
		}
	}
}

// lockFiles lists the *.lock files under the refs and at the top of the
// git directory gitDir (statgraph's packs' flock file aside).
func lockFiles(t *testing.T, gitDir string) []string {
	t.Helper()
	var locks []string
	require.NoError(t, filepath.WalkDir(gitDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != gitDir && filepath.Dir(p) == gitDir && d.Name() != "refs" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".lock") && d.Name() != ownPacksFile+".lock" {
			locks = append(locks, p)
		}
		return nil
	}))
	return locks
}

func short(h string) string { return h[:min(len(h), 12)] }

// breakStaleLocks removes only the locks of a push that is gone: not
// those of a push that is alive (its journal's flock is held, as by a
// worker stalled mid-push), nor a lock file made since in the place of a
// dead push's lock (by git, which keeps no journal).
func TestBreakStaleLocksLeavesLiveAndForeignLocks(t *testing.T) {
	remote := bareRemote(t, newSource(t))
	ctx := context.Background()
	live := newJournal(remote)
	require.NotNil(t, live)
	livePath := filepath.Join(remote, "refs", "heads", "live.lock")
	f, err := live.take(ctx, remote, livePath)
	require.NoError(t, err)
	defer f.Close()

	// A dead push's journal whose lock git has replaced since.
	dead := newJournal(remote)
	deadPath := filepath.Join(remote, "refs", "heads", "dead.lock")
	g, err := dead.take(ctx, remote, deadPath)
	require.NoError(t, err)
	g.Close()
	require.NoError(t, os.Remove(deadPath))
	require.NoError(t, os.WriteFile(deadPath, nil, 0o644)) // git's lock now
	dead.f.Close()                                         // the flock goes, as with a kill; its files stay

	require.NoError(t, breakStaleLocks(remote))
	require.FileExists(t, livePath, "the lock of a push that is alive")
	require.FileExists(t, deadPath, "a lock file made by another writer since")
	_, err = os.Stat(dead.name)
	require.ErrorIs(t, err, fs.ErrNotExist, "the dead push's journal is removed")
	_, err = os.Stat(live.name)
	require.NoError(t, err, "the live push's journal stays")
	live.close()
	os.Remove(livePath)
}
