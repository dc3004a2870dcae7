package proc

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain runs RunInit when the test binary is started as
// `proc.test sandbox-init ARGS`, as statgraph's hidden command does, and
// the attacker of TestLandlockWithoutBwrap as `proc.test landlock-attack`
// and a statgraph confining a command as `proc.test confine-sleep
// hold|release` (see TestSweepAfterKill).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "sandbox-init" {
		os.Exit(RunInit(os.Args[2:], os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "landlock-attack" {
		landlockAttacks(os.Args[2:])
		os.Exit(0)
	}
	if len(os.Args) > 1 && os.Args[1] == "confine-sleep" {
		os.Exit(confineSleep(os.Args[2] == "hold"))
	}
	os.Exit(m.Run())
}

// rawRequest sends req on a new connection to the proxy at sock and
// returns the response's status and body.
func rawRequest(t *testing.T, sock, req string) (int, string) {
	t.Helper()
	c, err := net.Dial("unix", sock)
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, req)
	require.NoError(t, err)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// TestProxy talks to the proxy on its socket: an allowed host is
// forwarded to, tunnelled to, another refused with a 403 saying how to
// allow it, headers past the bound refused, a request that is not a
// proxy's refused, and a list in another order shares the socket.
func TestProxy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s", r.URL.Path)
	}))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	sock, err := ProxySocket([]string{addr, "example.com"})
	require.NoError(t, err)
	again, err := ProxySocket([]string{"EXAMPLE.com", addr})
	require.NoError(t, err)
	assert.Equal(t, sock, again)
	st, err := os.Stat(sock)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o666), st.Mode().Perm())
	parent, err := os.Stat(filepath.Dir(filepath.Dir(sock)))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), parent.Mode().Perm(), "no other user reaches the sockets by path")

	status, body := rawRequest(t, sock, "GET http://"+addr+"/x HTTP/1.1\r\nHost: "+addr+"\r\nConnection: close\r\n\r\n")
	assert.Equal(t, 200, status)
	assert.Equal(t, "hello /x", body)

	status, body = rawRequest(t, sock, "GET http://other.example/ HTTP/1.1\r\nHost: other.example\r\nConnection: close\r\n\r\n")
	assert.Equal(t, 403, status)
	assert.Contains(t, body, "other.example (port 80) is not in this sandbox's network allowlist")
	assert.Contains(t, body, `"sandbox": {"network": ["other.example"]}`)

	status, _ = rawRequest(t, sock, "CONNECT other.example:443 HTTP/1.1\r\nHost: other.example:443\r\n\r\n")
	assert.Equal(t, 403, status)

	status, _ = rawRequest(t, sock, "GET /local HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	assert.Equal(t, 400, status)

	status, _ = rawRequest(t, sock, "GET http://"+addr+"/ HTTP/1.1\r\nHost: "+addr+"\r\nX-Big: "+strings.Repeat("a", 2*ProxyMaxHeaderBytes)+"\r\n\r\n")
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, status)

	// CONNECT: the tunnel carries a request of its own.
	c, err := net.Dial("unix", sock)
	require.NoError(t, err)
	defer c.Close()
	pending, err := connect(c, addr)
	require.NoError(t, err)
	assert.Empty(t, pending)
	_, err = io.WriteString(c, "GET /tunnel HTTP/1.1\r\nHost: "+addr+"\r\nConnection: close\r\n\r\n")
	require.NoError(t, err)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	b, _ := io.ReadAll(res.Body)
	assert.Equal(t, "hello /tunnel", string(b))
}

// TestSpliceIdle: a tunnel where nothing moves is closed after the idle
// time, both ends.
func TestSpliceIdle(t *testing.T) {
	a1, a2 := net.Pipe()
	b1, b2 := net.Pipe()
	start := time.Now()
	done := make(chan struct{})
	go func() { Splice(a2, b1, 200*time.Millisecond); close(done) }()
	_, err := a1.Write([]byte("x"))
	require.NoError(t, err)
	buf := make([]byte, 1)
	_, err = io.ReadFull(b2, buf)
	require.NoError(t, err)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("an idle tunnel was not closed")
	}
	assert.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond)
	_, err = a1.Read(buf)
	assert.Error(t, err, "closed")
}

// bridge starts this test binary as the bridge in front of sh -c script,
// with a proxy for allow.
func bridge(t *testing.T, script string, allow ...string) *exec.Cmd {
	t.Helper()
	sock, err := ProxySocket(append(allow, "example.com"))
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], append([]string{"sandbox-init"}, Init{Proxy: sock, Allow: allow}.Args([]string{"sh", "-c", script})...)...)
	return cmd
}

// TestBridgeExitStatus: the bridge exits with its command's status, a
// signal death as 128+n, and forwards SIGTERM to the command.
func TestBridgeExitStatus(t *testing.T) {
	for script, want := range map[string]int{"exit 7": 7, "kill -KILL $$": 128 + 9, "true": 0} {
		err := bridge(t, script).Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		assert.Equal(t, want, code, script)
	}
	cmd := bridge(t, `trap 'exit 42' TERM; echo ready; while :; do sleep 0.05; done`)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, _ := bufio.NewReader(out).ReadString('\n')
	require.Equal(t, "ready\n", line)
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err = cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 42, ee.ExitCode())
}

// TestBridgeEnvAndMirror: the command gets the proxy variables, reaches an
// allowed loopback endpoint through the proxy at the bridge's port, and at
// its own address through the mirror (here the bridge runs in the host's
// namespace, so the mirror's port is taken by the server itself and the
// bridge says it cannot listen there).
func TestBridgeEnvAndMirror(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "model") }))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	cmd := bridge(t, `env | grep -E '^(HTTPS_PROXY|NODE_USE_ENV_PROXY|no_proxy)=' | sort; curl -sS --proxy "$HTTP_PROXY" http://`+addr+`/`, addr)
	cmd.Env = append(os.Environ(), "HTTPS_PROXY=http://users.own.proxy:3128")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Regexp(t, `(?m)^HTTPS_PROXY=http://127\.0\.0\.1:\d+$`, string(out), "the bridge's proxy, over the user's")
	assert.Contains(t, string(out), "NODE_USE_ENV_PROXY=1\n")
	assert.Contains(t, string(out), "no_proxy=localhost,127.0.0.1,::1\n")
	assert.Contains(t, string(out), "will not be reachable inside the sandbox")
	assert.True(t, strings.HasSuffix(string(out), "model"), "%s", out)
}
