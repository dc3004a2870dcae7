package proc

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A process's proxy directory goes with CloseProxies, and one left by a
// process that died without it (a kill -9) goes when the next process
// starts a proxy; a living process's directory, and an older statgraph's
// unnamed one whose proxy still answers, stay.
func TestProxyDirectoriesDoNotPileUp(t *testing.T) {
	CloseProxies()
	tmp, err := os.MkdirTemp("/tmp", "proxydir-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(tmp) })
	t.Setenv("TMPDIR", tmp)

	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	alive := exec.Command("sleep", "60")
	require.NoError(t, alive.Start())
	t.Cleanup(func() { alive.Process.Kill(); alive.Wait() })

	mk := func(name string) string {
		dir := filepath.Join(tmp, name)
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "0"), 0o700))
		return dir
	}
	deadDir := mk(proxyDirPrefix + strconv.Itoa(dead.Process.Pid) + "-1")
	aliveDir := mk(proxyDirPrefix + strconv.Itoa(alive.Process.Pid) + "-2")
	oldDead := mk(proxyDirPrefix + "3")
	ln, err := net.Listen("unix", filepath.Join(mk(proxyDirPrefix+"4"), "0", ProxySocketName))
	require.NoError(t, err)
	defer ln.Close()
	oldAlive := filepath.Join(tmp, proxyDirPrefix+"4")
	hour := time.Now().Add(-time.Hour)
	for _, d := range []string{oldDead, oldAlive} {
		require.NoError(t, os.Chtimes(d, hour, hour))
	}

	sock, err := ProxySocket([]string{"example.com"})
	require.NoError(t, err)
	assert.NoDirExists(t, deadDir, "left by a process that is gone")
	assert.NoDirExists(t, oldDead, "an unnamed directory whose proxy is gone")
	assert.DirExists(t, aliveDir, "a living process's")
	assert.DirExists(t, oldAlive, "an unnamed directory whose proxy answers")
	own := filepath.Dir(filepath.Dir(sock))
	assert.Equal(t, proxyDirPrefix+strconv.Itoa(os.Getpid()), filepath.Base(own)[:len(proxyDirPrefix+strconv.Itoa(os.Getpid()))])

	CloseProxies()
	assert.NoDirExists(t, own, "CloseProxies removes the process's directory")
	_, err = net.Dial("unix", sock)
	assert.Error(t, err, "the proxy no longer serves")
}
