//go:build linux

package agents

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// nobodyEnv marks a test binary re-run by asNobody.
const nobodyEnv = "STATGRAPH_TEST_AS_NOBODY"

// asNobody runs the test named name again as the unprivileged user nobody
// (65534) when the test process is root, so that a test of what holds
// for root also shows it holds for an ordinary user: a copy of the test
// binary, in a world-readable directory, under setpriv. It does nothing in
// that inner run or when not root.
func asNobody(t *testing.T, name string) {
	t.Helper()
	if os.Getenv(nobodyEnv) != "" || os.Geteuid() != 0 {
		return
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is needed to run this test as an unprivileged user")
	}
	dir, err := os.MkdirTemp("", "nobody-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "agents.test")
	src, err := os.Open(os.Args[0])
	require.NoError(t, err)
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(dst, src)
	require.NoError(t, err)
	require.NoError(t, dst.Close())
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), nobodyEnv+"=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "as nobody:\n%s", out)
	require.Contains(t, string(out), "--- PASS: "+name, "as nobody:\n%s", out)
}
