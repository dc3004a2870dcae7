package proc

import (
	"bufio"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeUpstream is a corporate proxy on loopback: it records each
// CONNECT's target and credentials, answers 200, and then plays the
// target: it answers one HTTP request in the tunnel with "hello from T".
type fakeUpstream struct {
	ln   net.Listener
	mu   sync.Mutex
	seen []string // "target auth"
}

func startUpstream(t *testing.T) *fakeUpstream {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	u := &fakeUpstream{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go u.serve(c)
		}
	}()
	return u
}

func (u *fakeUpstream) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil || req.Method != http.MethodConnect {
		io.WriteString(c, "HTTP/1.1 405 Method Not Allowed\r\n\r\n")
		return
	}
	u.mu.Lock()
	u.seen = append(u.seen, req.Host+" "+req.Header.Get("Proxy-Authorization"))
	u.mu.Unlock()
	io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	inner, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	body := "hello from " + req.Host + inner.URL.Path
	io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\nConnection: close\r\n\r\n"+body)
}

func (u *fakeUpstream) targets() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.seen...)
}

// Behind a corporate proxy (HTTPS_PROXY in statgraph's environment) the
// sandbox's proxy reaches allowed hosts through it, with its credentials,
// for tunnels and plain HTTP alike; a host outside the allowlist is
// refused before the upstream hears of it. Without the chaining the
// proxy dials the target itself, which such a network does not route.
func TestProxyChainsThroughUpstream(t *testing.T) {
	CloseProxies()
	t.Cleanup(CloseProxies)
	up := startUpstream(t)
	t.Setenv("HTTPS_PROXY", "http://corp:s3cret@"+up.ln.Addr().String())
	t.Setenv("HTTP_PROXY", "http://corp:s3cret@"+up.ln.Addr().String())
	t.Setenv("NO_PROXY", "")
	sock, err := ProxySocket([]string{"models.example.test"})
	require.NoError(t, err)
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("corp:s3cret"))

	c, err := net.Dial("unix", sock)
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "CONNECT models.example.test:443 HTTP/1.1\r\nHost: models.example.test:443\r\n\r\n")
	require.NoError(t, err)
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	require.Equal(t, 200, res.StatusCode)
	_, err = io.WriteString(c, "GET /v1/models HTTP/1.1\r\nHost: models.example.test\r\n\r\n")
	require.NoError(t, err)
	res, err = http.ReadResponse(br, nil)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	assert.Equal(t, "hello from models.example.test:443/v1/models", string(body))

	code, body2 := rawRequest(t, sock, "GET http://models.example.test/plain HTTP/1.1\r\nHost: models.example.test\r\n\r\n")
	assert.Equal(t, 200, code)
	assert.Equal(t, "hello from models.example.test:80/plain", body2)

	code, _ = rawRequest(t, sock, "CONNECT elsewhere.example.test:443 HTTP/1.1\r\nHost: elsewhere.example.test:443\r\n\r\n")
	assert.Equal(t, http.StatusForbidden, code)
	assert.Equal(t, []string{"models.example.test:443 " + auth, "models.example.test:80 " + auth}, up.targets())
}

// An upstream that refuses the CONNECT (407, say) is a 502 naming the
// upstream with its password redacted.
func TestProxyUpstreamRefusalNamed(t *testing.T) {
	CloseProxies()
	t.Cleanup(CloseProxies)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			http.ReadRequest(bufio.NewReader(c))
			io.WriteString(c, "HTTP/1.1 407 Proxy Authentication Required\r\n\r\n")
			c.Close()
		}
	}()
	t.Setenv("HTTPS_PROXY", "http://corp:s3cret@"+ln.Addr().String())
	t.Setenv("NO_PROXY", "")
	sock, err := ProxySocket([]string{"models.example.test"})
	require.NoError(t, err)
	code, body := rawRequest(t, sock, "CONNECT models.example.test:443 HTTP/1.1\r\nHost: models.example.test:443\r\n\r\n")
	assert.Equal(t, http.StatusBadGateway, code)
	assert.Contains(t, body, "407")
	assert.Contains(t, body, "corp:xxxxx@")
	assert.NotContains(t, body, "s3cret")
}
