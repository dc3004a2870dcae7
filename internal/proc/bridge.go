package proc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// The bridge runs inside a sandbox's own network namespace, as the parent
// of the sandboxed command, and carries statgraph's allowlisting proxy
// into it: it listens on 127.0.0.1 (a port of its own choosing, which the
// proxy variables it gives the command name) and forwards every
// connection to the proxy's unix socket, bound into the sandbox. For each
// allowed loopback endpoint ("127.0.0.1:8080", "localhost:11434") it also
// listens on that same port inside and tunnels each connection there with
// CONNECT, so a program told to use http://127.0.0.1:8080 (a local model
// server) reaches it without knowing about proxies.

// ProxyVars returns the environment that points HTTP clients at a proxy
// listening at addr (host:port): both spellings of HTTP_PROXY, HTTPS_PROXY
// and ALL_PROXY, NO_PROXY for loopback (where mirrored endpoints are
// reached directly), and NODE_USE_ENV_PROXY=1, without which Node's fetch
// ignores the others.
func ProxyVars(addr string) []string {
	u := "http://" + addr
	return []string{
		"HTTP_PROXY=" + u, "HTTPS_PROXY=" + u, "ALL_PROXY=" + u,
		"http_proxy=" + u, "https_proxy=" + u, "all_proxy=" + u,
		"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1",
		"NODE_USE_ENV_PROXY=1",
	}
}

// startBridge listens on the sandbox's loopback (a port of its own
// choosing) and on each of mirrors, forwarding every connection to the
// proxy at sock, and returns the address of the first listener; it warns
// on stderr of a mirror it cannot listen on. The listeners serve until the
// process exits.
func startBridge(sock string, mirrors []string, stderr io.Writer) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("listen on the sandbox's loopback: %w", err)
	}
	go acceptLoop(ln, func(c net.Conn) { forward(c, sock, "") })
	for _, m := range mirrors {
		host, port, _ := net.SplitHostPort(m)
		addrs := []string{m}
		if host == "localhost" {
			addrs = []string{net.JoinHostPort("127.0.0.1", port), net.JoinHostPort("::1", port)}
		}
		for i, a := range addrs {
			mln, err := net.Listen("tcp", a)
			if err != nil {
				if i == 0 { // ::1 may not exist in the namespace
					fmt.Fprintf(stderr, "statgraph sandbox-init: %s will not be reachable inside the sandbox: %v\n", m, err)
				}
				continue
			}
			go acceptLoop(mln, func(c net.Conn) { forward(c, sock, m) })
		}
	}
	return ln.Addr().String(), nil
}

// acceptLoop hands each connection ln accepts to handle, in a goroutine
// of its own, until ln fails.
func acceptLoop(ln net.Listener, handle func(net.Conn)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		go handle(c)
	}
}

// forward connects c to the proxy at sock: as it is when target is "",
// else through a CONNECT tunnel to target.
func forward(c net.Conn, sock, target string) {
	defer c.Close()
	p, err := net.DialTimeout("unix", sock, proxyDialTimeout)
	if err != nil {
		return
	}
	defer p.Close()
	if target != "" {
		pending, err := connect(p, target)
		if err != nil {
			return
		}
		if _, err := c.Write(pending); err != nil {
			return
		}
	}
	Splice(c, p, ProxyIdleTimeout)
}

// connect asks the proxy on p for a tunnel to target and returns what the
// target sent that was read with the proxy's answer (a server that speaks
// first).
func connect(p net.Conn, target string) ([]byte, error) {
	_ = p.SetDeadline(time.Now().Add(ProxyHeaderTimeout + proxyDialTimeout))
	if _, err := fmt.Fprintf(p, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target); err != nil {
		return nil, err
	}
	br := bufio.NewReader(io.LimitReader(p, ProxyMaxHeaderBytes))
	res, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("proxy refused CONNECT %s: %s", target, strings.TrimSpace(res.Status))
	}
	_ = p.SetDeadline(time.Time{})
	pending, _ := br.Peek(br.Buffered())
	return pending, nil
}
