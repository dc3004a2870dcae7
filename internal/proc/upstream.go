package proc

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// dialThrough connects to hostport through the HTTP(S) proxy up with a
// CONNECT, sending up's user and password as Basic proxy credentials, and
// returns the tunnel. Errors name up with its password redacted.
func dialThrough(ctx context.Context, up *url.URL, hostport string) (net.Conn, error) {
	addr := up.Host
	if up.Port() == "" {
		addr = net.JoinHostPort(up.Hostname(), map[string]string{"http": "80", "https": "443"}[up.Scheme])
	}
	fail := func(err error) error {
		return fmt.Errorf("through the proxy %s (statgraph's HTTPS_PROXY or HTTP_PROXY) to %s: %w", up.Redacted(), hostport, err)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fail(err)
	}
	if up.Scheme == "https" {
		tc := tls.Client(c, &tls.Config{ServerName: up.Hostname(), MinVersion: tls.VersionTLS12})
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, fail(err)
		}
		c = tc
	}
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: hostport}, Host: hostport, Header: http.Header{}}
	if u := up.User; u != nil {
		pw, _ := u.Password()
		req.Header.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pw)))
	}
	br := bufio.NewReader(c)
	if err := req.Write(c); err != nil {
		c.Close()
		return nil, fail(err)
	}
	res, err := http.ReadResponse(br, req)
	if err != nil {
		c.Close()
		return nil, fail(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		c.Close()
		return nil, fail(fmt.Errorf("it answered %s", res.Status))
	}
	c.SetDeadline(time.Time{})
	return &tunnelConn{Conn: c, r: br}, nil
}

// tunnelConn is a tunnel through an upstream proxy: reads come first from
// what was read past the proxy's answer.
type tunnelConn struct {
	net.Conn
	r *bufio.Reader
}

func (t *tunnelConn) Read(b []byte) (int, error) { return t.r.Read(b) }

// CloseWrite half-closes the tunnel where the connection can (Splice uses
// it to pass an end on).
func (t *tunnelConn) CloseWrite() error {
	if cw, ok := t.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return t.Conn.Close()
}
