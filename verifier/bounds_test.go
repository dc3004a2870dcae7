package verifier

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/statgraph/statgraph/internal/asuser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/proc"
)

// probeEnv names a prebuilt testdata/probe, which the test binary re-run
// as another user gets from its parent (it may not write a build cache).
const probeEnv = "STATGRAPH_TEST_PROBE"

// builtProbe is testdata/probe built once per test binary, in a directory
// every user can read; removed by TestMain.
var builtProbe = sync.OnceValues(func() (string, error) {
	if p := os.Getenv(probeEnv); p != "" {
		return p, nil
	}
	dir, err := os.MkdirTemp("", "statgraph-probe-")
	if err != nil {
		return "", err
	}
	probeDir = dir
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	exe := filepath.Join(dir, "probe")
	if out, err := exec.Command("go", "build", "-o", exe, "./testdata/probe").CombinedOutput(); err != nil {
		return "", fmt.Errorf("building testdata/probe: %v: %s", err, out)
	}
	return exe, nil
})

// probeDir is the directory builtProbe made, if it made one.
var probeDir string

// probeSandbox returns a workspace holding a copy of the probe (the
// sandbox's private /tmp hides the built one), the probe's path, and a
// sandbox around the workspace with limits l.
func probeSandbox(t *testing.T, l proc.Limits) (ws, probe string, sb *Sandbox) {
	t.Helper()
	requireSandbox(t)
	built, err := builtProbe()
	require.NoError(t, err)
	ws = t.TempDir()
	probe = filepath.Join(ws, "probe")
	src, err := os.Open(built)
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.OpenFile(probe, os.O_CREATE|os.O_WRONLY, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
	return ws, probe, &Sandbox{Workspace: ws, Network: true, Limits: l}
}

// runBounded runs script with sh in the workspace of sb through Run.
func runBounded(t *testing.T, sb *Sandbox, script string) Result {
	t.Helper()
	res, err := Run(context.Background(), Command{Argv: []string{"sh", "-c", script}, Dir: sb.Workspace, Sandbox: sb,
		Timeout: 20 * time.Second, Grace: 200 * time.Millisecond})
	require.NoError(t, err)
	return res
}

// TestBoundsProcesses: a command starting 200 processes gets fewer than
// Procs of them (cgroup pids.max as root, RLIMIT_NPROC as a user);
// unbounded it gets them all.
func TestBoundsProcesses(t *testing.T) {
	t.Parallel()
	for _, procs := range []int{-1, 64} {
		t.Run(fmt.Sprintf("procs=%d", procs), func(t *testing.T) {
			_, probe, sb := probeSandbox(t, proc.Limits{Procs: procs})
			res := runBounded(t, sb, probe+" spawn 200")
			var n int
			_, err := fmt.Sscanf(res.Output, "spawned %d", &n)
			require.NoError(t, err, res.Output)
			if procs < 0 {
				assert.Equal(t, 200, n, "unbounded, every process starts")
			} else {
				assert.Less(t, n, procs, "no more than Procs tasks")
				assert.Positive(t, n, "the command itself runs")
			}
		})
	}
}

// TestBoundsForkBomb: a real fork bomb under Procs ends with its timeout,
// and neither its processes nor its cgroups outlive Run; the host's
// process count is back where it was. Not parallel: no other test's
// processes or cgroups come and go meanwhile.
func TestBoundsForkBomb(t *testing.T) {
	_, _, sb := probeSandbox(t, proc.Limits{Procs: 100})
	before := hostProcesses()
	start := time.Now()
	res, err := Run(context.Background(), Command{Shell: "b() { b | b & }; b; sleep 30", Dir: sb.Workspace, Sandbox: sb,
		Timeout: 3 * time.Second, Grace: 200 * time.Millisecond})
	require.NoError(t, err)
	assert.True(t, res.TimedOut, "the bomb runs until its timeout: %+v", res)
	assert.Less(t, time.Since(start), 10*time.Second, "Run returns soon after the timeout")
	// Other tests and other programs come and go meanwhile: allow some.
	assert.Less(t, hostProcesses(), before+50, "the bomb's processes are gone")
	left, _ := filepath.Glob(fmt.Sprintf("/sys/fs/cgroup/*/statgraph/sg-%d-*", os.Getpid()))
	assert.Empty(t, left, "the command's cgroups are removed")
}

// hostProcesses counts the processes this process can see.
func hostProcesses() int {
	entries, _ := filepath.Glob("/proc/[0-9]*")
	return len(entries)
}

// TestBoundsMemory (root: a memory cgroup): a command touching 256 MiB
// under a 64 MiB bound is killed; unbounded it finishes.
func TestBoundsMemory(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("only root can make a memory cgroup here (see proc.Support)")
	}
	t.Parallel()
	for _, mem := range []int64{-1, 64 << 20} {
		t.Run(fmt.Sprintf("memory=%d", mem), func(t *testing.T) {
			_, probe, sb := probeSandbox(t, proc.Limits{MemoryBytes: mem})
			res := runBounded(t, sb, probe+" alloc 256")
			if mem < 0 {
				assert.Contains(t, res.Output, "allocated 256 MiB")
			} else {
				assert.NotContains(t, res.Output, "allocated", "the hog was stopped")
				assert.NotEqual(t, 0, res.ExitCode, res.Output)
			}
		})
	}
}

// TestBoundsTmp: filling /tmp stops at TmpBytes with ENOSPC.
func TestBoundsTmp(t *testing.T) {
	t.Parallel()
	for _, tmp := range []int64{-1, 32 << 20} {
		t.Run(fmt.Sprintf("tmp=%d", tmp), func(t *testing.T) {
			_, probe, sb := probeSandbox(t, proc.Limits{TmpBytes: tmp})
			res := runBounded(t, sb, probe+" write /tmp/fill 256")
			if tmp < 0 {
				assert.Contains(t, res.Output, "write: ok")
			} else {
				assert.Contains(t, res.Output, "write: write /tmp/fill: no space left on device")
			}
		})
	}
}

// TestBoundsFileSize: writing a file past FileBytes fails with EFBIG (and
// a program that does not ignore it dies of SIGXFSZ).
func TestBoundsFileSize(t *testing.T) {
	t.Parallel()
	for _, file := range []int64{-1, 8 << 20} {
		t.Run(fmt.Sprintf("file=%d", file), func(t *testing.T) {
			ws, probe, sb := probeSandbox(t, proc.Limits{FileBytes: file})
			res := runBounded(t, sb, probe+" write big 64; head -c 16777216 /dev/zero > big2; echo head=$?")
			if file < 0 {
				assert.Contains(t, res.Output, "write: ok")
				assert.Contains(t, res.Output, "head=0")
			} else {
				assert.Contains(t, res.Output, "write: write big: file too large")
				assert.Contains(t, res.Output, "head=153", "head dies of SIGXFSZ (128+25)")
				st, err := os.Stat(filepath.Join(ws, "big2"))
				require.NoError(t, err)
				assert.LessOrEqual(t, st.Size(), file)
			}
		})
	}
}

// withoutPrivilegeDrop returns the bwrap command line argv without the
// layers the seccomp filter backs up (the user namespace's unprivileged
// uid, --cap-drop ALL and --disable-userns), so that a control run shows
// what the filter alone stops.
func withoutPrivilegeDrop(argv []string) []string {
	var out []string
	for i := 0; i < len(argv); i++ {
		switch argv[i] {
		case "--uid", "--gid", "--cap-drop":
			i++
		case "--unshare-user", "--disable-userns":
		default:
			out = append(out, argv[i])
		}
		if argv[i] == "--" {
			return append(out, argv[i+1:]...)
		}
	}
	return out
}

// TestSeccompDeniesAttacks: each attack works in the sandbox without the
// seccomp filter and the privilege drop it backs up (bwrap run as Run runs
// it, less --seccomp and withoutPrivilegeDrop) and fails with EPERM
// through Run. Mounts work without the filter only for root
// (bwrap as a user drops every capability); the rest work for both.
func TestSeccompDeniesAttacks(t *testing.T) {
	t.Parallel()
	ws, probe, sb := probeSandbox(t, proc.Limits{})
	for _, a := range []struct {
		name, script, works, denied string
		rootOnly                    bool
	}{
		{"remount / read-write", probe + " mount", "mount: ok", "mount: operation not permitted", true},
		{"umount /proc", probe + " umount", "umount: ok", "umount: operation not permitted", true},
		{"unshare -U", "unshare -U true && echo unshared", "unshared", "unshare failed: Operation not permitted", false},
		{"ptrace a sibling", "sleep 5 & " + probe + " ptrace $!; kill $!", "ptrace: ok", "ptrace: operation not permitted", false},
		{"process_vm_readv of a sibling", "sleep 5 & " + probe + " vmread $!; kill $!", "vmread: ok", "vmread: operation not permitted", false},
		{"keyctl", probe + " keyctl", "keyctl: ok", "keyctl: operation not permitted", false},
	} {
		t.Run(a.name, func(t *testing.T) {
			argv, env, err := sb.wrap([]string{"sh", "-c", a.script}, ws)
			require.NoError(t, err)
			argv = withoutPrivilegeDrop(argv)
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Dir, cmd.Env = ws, append(os.Environ(), env...)
			out, _ := cmd.CombinedOutput()
			if os.Getuid() == 0 || !a.rootOnly {
				assert.Contains(t, string(out), a.works, "without the filter the attack works (the test can fail)")
			}
			res := runBounded(t, sb, a.script)
			assert.Contains(t, res.Output, a.denied, "through Run the filter denies it")
			assert.NotContains(t, res.Output, a.works)
		})
	}
}

// TestBoundsAsUnprivilegedUser runs the bounds and seccomp tests again as
// user 65534 (a copy of the test binary under setpriv): cgroup v1 is not
// writable for it, so RLIMIT_NPROC must bound the processes, a real fork
// bomb's included. (The memory bound needs a cgroup: TestBoundsMemory is
// root's.)
func TestBoundsAsUnprivilegedUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("already unprivileged: the tests above ran as this user")
	}
	requireSandbox(t)
	probe, err := builtProbe()
	require.NoError(t, err)
	tests := []string{"TestBoundsProcesses", "TestBoundsForkBomb", "TestBoundsTmp", "TestBoundsFileSize", "TestSeccompDeniesAttacks"}
	asuser.RunTests(t, "^("+strings.Join(tests, "|")+")$", tests, probeEnv+"="+probe, "TMPDIR=/tmp")
}

// TestBoundsRefusedWhenTheyCannotBeSet: when a bound cannot be set (more
// descriptors than the kernel allows any process), Run fails with
// ErrSandboxUnavailable naming it, and nothing of the command ran. Not
// parallel: no other test's cgroups exist meanwhile.
func TestBoundsRefusedWhenTheyCannotBeSet(t *testing.T) {
	ws, _, sb := probeSandbox(t, proc.Limits{OpenFiles: 1 << 30})
	res, err := Run(context.Background(), Command{Shell: "echo ran > ran", Dir: ws, Sandbox: sb, Timeout: 20 * time.Second})
	require.ErrorIs(t, err, ErrSandboxUnavailable, "%+v", res)
	t.Log(err)
	assert.Contains(t, err.Error(), "RLIMIT_NOFILE")
	assert.Contains(t, err.Error(), "sandbox check")
	assert.NoFileExists(t, filepath.Join(ws, "ran"), "the command never ran")
	left, _ := filepath.Glob(fmt.Sprintf("/sys/fs/cgroup/*/statgraph/sg-%d-*", os.Getpid()))
	assert.Empty(t, left, "no cgroup is left behind")
}
