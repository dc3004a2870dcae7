// Package asuser lets a test that runs as root (as CI does) show that what
// it checks also holds for an unprivileged user: it runs the test binary,
// or any program, again as uid and gid 65534 (nobody) under setpriv, from a
// copy in a world-readable directory. It is for tests only.
package asuser

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/statgraph/statgraph/internal/fsutil"
)

// UID is the uid (and gid) the programs run as.
const UID = 65534

// Env is set in the environment of a test binary that RunTests runs again,
// so that the inner run knows it is one (see Inner).
const Env = "STATGRAPH_TEST_AS_USER"

// Inner reports whether this process is a test binary RunTests started.
func Inner() bool { return os.Getenv(Env) != "" }

// Dir returns a new directory the user can read and write (mode 0777,
// removed when the test ends), outside the test's own 0700 temporary
// directories.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "statgraph-asuser-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Copy copies the program exe into dir (from Dir) and returns the copy's
// path, executable by the user.
func Copy(t testing.TB, exe, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, filepath.Base(exe))
	if err := fsutil.CopyFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// Command returns a command running bin with args as the user, in dir,
// with the test's environment and HOME and TMPDIR set to dir. It fails the
// test when setpriv (util-linux) is missing.
func Command(t testing.TB, dir, bin string, args ...string) *exec.Cmd {
	t.Helper()
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatalf("setpriv (util-linux) runs programs as an unprivileged user: %v", err)
	}
	uid := "=" + strconv.Itoa(UID)
	cmd := exec.Command(setpriv, append([]string{"--reuid" + uid, "--regid" + uid, "--clear-groups", "--", bin}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "TMPDIR="+dir)
	return cmd
}

// RunTests runs the tests of this test binary whose names match the
// -test.run pattern again as the user, from a copy of the binary, with Env
// and env set, and fails t unless each named test passed. It returns the
// inner run's output. Call it only as root and not in an inner run.
func RunTests(t testing.TB, pattern string, names []string, env ...string) string {
	t.Helper()
	dir := Dir(t)
	cmd := Command(t, dir, Copy(t, os.Args[0], dir), "-test.run", pattern, "-test.v", "-test.count=1")
	cmd.Env = append(append(cmd.Env, Env+"=1"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as uid %d: %v\n%s", UID, err, out)
	}
	for _, name := range names {
		if !strings.Contains(string(out), "--- PASS: "+name) {
			t.Errorf("as uid %d, %s did not pass:\n%s", UID, name, out)
		}
	}
	return string(out)
}
