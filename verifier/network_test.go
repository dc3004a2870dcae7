package verifier

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statgraph/statgraph/internal/asuser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNetProbeHelper is not a test: run inside a sandbox by the network
// tests, it tries each probe of NET_PROBES (";"-separated) and prints one
// line per probe, "<probe>: ok <what came back>" or "<probe>: fail <why>".
// A probe is "proxy URL" (GET through the proxy HTTPS_PROXY names, even
// for loopback), "direct URL" (GET without a proxy), "dial HOST:PORT",
// "abstract NAME" (an abstract unix socket) or "env NAME".
func TestNetProbeHelper(t *testing.T) {
	probes := os.Getenv("NET_PROBES")
	if probes == "" {
		t.Skip("run by the network tests inside a sandbox")
	}
	for p := range strings.SplitSeq(probes, ";") {
		kind, arg, _ := strings.Cut(p, " ")
		out, err := probe(kind, arg)
		if err != nil {
			fmt.Printf("%s: fail %v\n", p, err)
		} else {
			fmt.Printf("%s: ok %s\n", p, out)
		}
	}
	os.Exit(0)
}

func probe(kind, arg string) (string, error) {
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} // the test server's own certificate
	switch kind {
	case "proxy":
		tr.Proxy = func(*http.Request) (*url.URL, error) { return url.Parse(os.Getenv("HTTPS_PROXY")) }
	case "direct":
	case "dial", "abstract":
		addr, network := arg, "tcp"
		if kind == "abstract" {
			addr, network = "@"+arg, "unix"
		}
		c, err := net.DialTimeout(network, addr, 5*time.Second)
		if err != nil {
			return "", err
		}
		c.Close()
		return "connected", nil
	case "env":
		return arg + "=" + os.Getenv(arg), nil
	default:
		return "", fmt.Errorf("unknown probe %q", kind)
	}
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(arg)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return fmt.Sprintf("status=%d body=%q", res.StatusCode, body), nil
}

// netProbes runs NET_PROBES probes in sandbox sb (this test binary is
// its Helper and its command) and returns the line of each probe.
func netProbes(t *testing.T, sb *Sandbox, probes ...string) map[string]string {
	t.Helper()
	self, err := filepath.Abs(os.Args[0])
	require.NoError(t, err)
	sb.Workspace, sb.ReadOnly = t.TempDir(), []string{self}
	sb.Helper = []string{self, "sandbox-init"}
	res, err := Run(context.Background(), Command{
		Argv: []string{self, "-test.run", "^TestNetProbeHelper$"}, Dir: sb.Workspace, Timeout: time.Minute,
		Env: []string{"NET_PROBES=" + strings.Join(probes, ";")}, Sandbox: sb,
	})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, res.Output)
	lines := map[string]string{}
	for _, p := range probes {
		for l := range strings.Lines(res.Output) {
			if rest, ok := strings.CutPrefix(l, p+": "); ok {
				lines[p] = strings.TrimSpace(rest)
			}
		}
		require.Contains(t, lines, p, "no line for probe %q in:\n%s", p, res.Output)
	}
	return lines
}

// serve starts a server on the host's 127.0.0.1 answering body, and
// returns its host:port.
func serve(t *testing.T, body string, tlsOn bool) string {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, body) })
	srv := httptest.NewUnstartedServer(h)
	if tlsOn {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// abstractListener listens on a fresh abstract unix socket of the host's
// network namespace (the stand-in for X11's or D-Bus's) and returns its
// name.
func abstractListener(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("statgraph-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	ln, err := net.Listen("unix", "@"+name)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return name
}

// TestSandboxProxyAllowlist: in a real bwrap sandbox whose network is
// closed but for two allowlisted endpoints (listeners on the host's
// 127.0.0.1 standing for the internet), a command reaches the allowed
// ones through statgraph's proxy (plain HTTP forwarded, HTTPS tunnelled
// with CONNECT), also directly at their own address (the bridge mirrors
// allowed loopback endpoints), and is refused another with a 403 naming
// the host and saying how to allow it; that other listener and an
// abstract unix socket of the host are unreachable directly. Its
// environment has the proxy variables, Node's included.
func TestSandboxProxyAllowlist(t *testing.T) {
	requireSandbox(t)
	allowed, tlsAllowed, refused := serve(t, "internet A", false), serve(t, "internet C", true), serve(t, "internet B", false)
	abstract := abstractListener(t)
	sb := &Sandbox{AllowHosts: []string{allowed, tlsAllowed}}
	got := netProbes(t, sb,
		"proxy http://"+allowed+"/", "proxy https://"+tlsAllowed+"/", "direct http://"+allowed+"/",
		"proxy http://"+refused+"/", "proxy https://"+refused+"/", "dial "+refused, "abstract "+abstract,
		"env NODE_USE_ENV_PROXY", "env NO_PROXY")
	assert.Equal(t, `ok status=200 body="internet A"`, got["proxy http://"+allowed+"/"])
	assert.Equal(t, `ok status=200 body="internet C"`, got["proxy https://"+tlsAllowed+"/"], "CONNECT tunnel")
	assert.Equal(t, `ok status=200 body="internet A"`, got["direct http://"+allowed+"/"], "mirrored loopback endpoint")
	host, _, _ := net.SplitHostPort(refused)
	assert.Contains(t, got["proxy http://"+refused+"/"], "ok status=403")
	assert.Contains(t, got["proxy http://"+refused+"/"], host)
	assert.Contains(t, got["proxy http://"+refused+"/"], `\"sandbox\": {\"network\": [\"`+host+`\"]}`)
	assert.Contains(t, got["proxy https://"+refused+"/"], "fail")
	assert.Contains(t, got["proxy https://"+refused+"/"], "Forbidden")
	assert.Contains(t, got["dial "+refused], "connection refused", "the host's loopback is not the sandbox's")
	assert.Contains(t, got["abstract "+abstract], "fail", "the host's abstract sockets are not the sandbox's")
	assert.Equal(t, "ok NODE_USE_ENV_PROXY=1", got["env NODE_USE_ENV_PROXY"])
	assert.Equal(t, "ok NO_PROXY=localhost,127.0.0.1,::1", got["env NO_PROXY"])
}

// TestSandboxNetworkClosed: without AllowHosts nothing of the host's is
// reachable, not its loopback listener, not its abstract unix socket;
// with Network (the host's namespace, what every sandbox had before the
// network was closed by default) and without the Landlock layer (which
// scopes abstract sockets on its own, see TestSandboxLandlock) both are:
// the attack the closed namespace stops.
func TestSandboxNetworkClosed(t *testing.T) {
	requireSandbox(t)
	listener, abstract := serve(t, "host service", false), abstractListener(t)
	probes := []string{"direct http://" + listener + "/", "abstract " + abstract}
	closed := netProbes(t, &Sandbox{}, probes...)
	assert.Contains(t, closed[probes[0]], "connection refused")
	assert.Contains(t, closed[probes[1]], "fail")
	open := netProbes(t, &Sandbox{Network: true, noLandlock: true}, probes...)
	assert.Equal(t, `ok status=200 body="host service"`, open[probes[0]])
	assert.Equal(t, "ok connected", open[probes[1]])
}

// TestSandboxAllowHostsNeedsHelper: AllowHosts without a Helper, or with a
// malformed host, is an error before anything runs.
func TestSandboxAllowHostsNeedsHelper(t *testing.T) {
	requireSandbox(t)
	ws := t.TempDir()
	_, err := Run(context.Background(), Command{Argv: []string{"true"}, Dir: ws,
		Sandbox: &Sandbox{Workspace: ws, AllowHosts: []string{"example.com"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Helper")
	_, err = Run(context.Background(), Command{Argv: []string{"true"}, Dir: ws,
		Sandbox: &Sandbox{Workspace: ws, AllowHosts: []string{"https://example.com/x"}, Helper: []string{"/bin/true"}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"https://example.com/x" is not a host`)
}

// TestSandboxProxyAsUser runs TestSandboxProxyAllowlist and
// TestSandboxNetworkClosed as an unprivileged user (uid 65534), from a
// copy of this test binary in a world-readable directory: the proxy, its
// socket and the bridge work for a user as for root.
func TestSandboxProxyAsUser(t *testing.T) {
	requireSandbox(t)
	if os.Getuid() != 0 {
		t.Skip("needs root to become another user; the tests above run as this user")
	}
	names := []string{"TestSandboxProxyAllowlist", "TestSandboxNetworkClosed"}
	asuser.RunTests(t, "^("+strings.Join(names, "|")+")$", names)
}
