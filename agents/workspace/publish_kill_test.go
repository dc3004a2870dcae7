//go:build linux

package workspace

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The environment that turns this test binary into a publishing child:
// TestPublishChild reopens the workspace named by it and calls Finish.
const (
	childSourceEnv = "STATGRAPH_TEST_PUBLISH_SOURCE"
	childRootEnv   = "STATGRAPH_TEST_PUBLISH_ROOT"
	childTaskEnv   = "STATGRAPH_TEST_PUBLISH_TASK"
)

// TestPublishChild is the body of the child process of
// TestFinishSurvivesKill9; run normally it does nothing.
func TestPublishChild(t *testing.T) {
	src := os.Getenv(childSourceEnv)
	if src == "" {
		return
	}
	w, err := Prepare(context.Background(), Options{Source: src, TaskID: os.Getenv(childTaskEnv), Root: os.Getenv(childRootEnv)})
	if err == nil {
		fmt.Println("publishing") // the parent times its kill from this line
		err = w.Finish(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	os.Exit(0)
}

// TestFinishSurvivesKill9 kills a process publishing a branch with many new
// objects at spread moments of its publish (and, every third time, the git
// processes it started along with it), and checks after every kill that the
// source repository passes git fsck --full and that the branch, if it
// exists, is fully readable, and that publishing the same work again
// succeeds with a readable branch.
func TestFinishSurvivesKill9(t *testing.T) {
	const kills, files = 21, 120
	src := newSource(t)
	root := t.TempDir()
	w := prepare(t, Options{Source: src, TaskID: "kill", Root: root})
	ctx := context.Background()
	attempt := 0
	// newWork commits fresh content in every file, so that each publish
	// has files+2 objects the source lacks.
	newWork := func() {
		t.Helper()
		attempt++
		buf := make([]byte, 1500)
		for i := range files {
			rand.Read(buf)
			require.NoError(t, w.FS().WriteFile(fmt.Sprintf("gen/f%03d.txt", i), hex.EncodeToString(buf)))
		}
		_, _, err := w.Commit(ctx, attempt, fmt.Sprintf("attempt %d", attempt))
		require.NoError(t, err)
	}
	var stderr strings.Builder
	// start starts a publishing child and returns once it is about to
	// call Finish.
	start := func() *exec.Cmd {
		t.Helper()
		stderr.Reset()
		cmd := exec.Command(os.Args[0], "-test.run=^TestPublishChild$", "-test.count=1")
		cmd.Stderr = &stderr
		cmd.Env = append(os.Environ(), childSourceEnv+"="+src, childRootEnv+"="+root, childTaskEnv+"=kill")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		line, err := bufio.NewReader(stdout).ReadString('\n')
		require.NoError(t, err, "the publishing child did not start: %s", stderr.String())
		require.Equal(t, "publishing\n", line)
		return cmd
	}
	// A whole publish, uninterrupted, gives the span the kills spread over.
	newWork()
	cmd := start()
	began := time.Now()
	require.NoError(t, cmd.Wait(), "uninterrupted publish: %s", stderr.String())
	span := time.Since(began)
	t.Logf("an uninterrupted publish of %d objects takes %v", files+2, span)
	checkSource(t, src, w.Branch())

	hitGit := 0
	for i := range kills {
		newWork()
		cmd := start()
		delay := span * time.Duration(i) / time.Duration(kills-1)
		group := i%3 == 2 // kill the git processes too, not only the publisher
		time.Sleep(delay)
		if group {
			if len(descendants(cmd.Process.Pid)) > 0 {
				hitGit++
			}
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		} else {
			cmd.Process.Signal(syscall.SIGKILL)
		}
		cmd.Wait()
		waitGroupGone(t, cmd.Process.Pid)
		checkSource(t, src, w.Branch())
		// The next publish of the same work (what resume does) completes
		// it, whatever the kill left behind (a half-written pack or index
		// of these very objects included).
		require.NoError(t, w.Finish(ctx), "the publish after kill %d", i+1)
		checkSource(t, src, w.Branch())
		if t.Failed() {
			t.Fatalf("kill %d of %d (after %v%s) left the source repository broken", i+1, kills, delay, map[bool]string{true: ", with its git processes"}[group])
		}
	}
	t.Logf("%d of %d group kills caught git running", hitGit, kills/3)

	require.NoError(t, w.Finish(ctx), "the publish after the kills")
	assert.Equal(t, gitRun(t, w.Dir(), "rev-parse", "HEAD"), gitRun(t, src, "rev-parse", w.Branch()))
	checkSource(t, src, w.Branch())
	require.NoError(t, w.CheckPublished(ctx))
}

// checkSource fails t unless git fsck --full finds nothing wrong in src and
// every object reachable from branch (when it exists) is readable.
func checkSource(t *testing.T, src, branch string) {
	t.Helper()
	fsck := exec.Command("git", "fsck", "--full", "--no-progress")
	fsck.Dir = src
	out, err := fsck.CombinedOutput()
	assert.NoError(t, err, "git fsck --full: %s", out)
	for _, l := range strings.Split(string(out), "\n") {
		// dangling objects are what an interrupted publish may leave, as git's own fetch does
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "dangling ") {
			assert.Fail(t, "git fsck --full reports a problem", "%s", l)
		}
	}
	if exec.Command("git", "-C", src, "rev-parse", "--verify", "-q", "refs/heads/"+branch).Run() != nil {
		return // not published yet
	}
	out, err = exec.Command("git", "-C", src, "rev-list", "--objects", "refs/heads/"+branch).CombinedOutput()
	assert.NoError(t, err, "the published branch %s is not readable: %s", branch, out)
}

// descendants returns the processes whose parent is pid.
func descendants(pid int) []int {
	var kids []int
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		n, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// the fields after the command name, which is in parentheses
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			kids = append(kids, n)
		}
	}
	return kids
}

// waitGroupGone waits until no process of the group pgid is left (a git
// process orphaned by the kill finishes on its own).
func waitGroupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(-pgid, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(-pgid, syscall.SIGKILL)
			t.Fatalf("processes of group %d still run 30s after the kill", pgid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
