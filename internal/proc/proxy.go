package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpproxy"

	"github.com/statgraph/statgraph/internal/fsutil"
	"github.com/statgraph/statgraph/internal/hostrule"
)

// proxies holds the process's allowlisting proxies, one per distinct
// allowlist, each listening on a unix socket in dir. mu guards both; a
// proxy lives until the process ends.
var proxies struct {
	mu      sync.Mutex
	dir     string            // private (0700) directory holding one sub-directory per proxy
	sockets map[string]string // canonical allowlist -> socket path
	servers []*http.Server    // the proxies, for CloseProxies
}

// ProxySocketName is the file name of every proxy's socket in its
// directory: a sandbox binds the directory (ProxySocket's path's parent)
// and finds the socket under this name.
const ProxySocketName = "proxy.sock"

// ProxySocket returns the unix socket of an HTTP(S) proxy that lets
// requests through only to hosts allow names (see hostrule.Check for the
// forms), creating and starting it on first use for this list; lists with
// the same rules in another order or case share one proxy. The proxy
// serves until the process ends or calls CloseProxies.
//
// The proxy forwards plain HTTP requests (absolute URLs) and tunnels
// CONNECT; anything else gets 400, and a host not allowed gets 403 with a
// body naming it and saying how to allow it in tasks.json. It resolves
// names itself (a sandbox has no DNS). A name rule never reaches loopback,
// link-local or unspecified addresses (see allowedAddr).
//
// The socket is in a directory of its own (mode 0755, the socket 0666, so
// a sandbox running as another uid can connect once it is bound in) inside
// a private directory (0700) under the system's temporary directory, so no
// other user of the host can reach it by its path. An allow that is empty
// or holds a malformed rule is an error. ProxySocket is safe for
// concurrent use.
func ProxySocket(allow []string) (string, error) {
	if len(allow) == 0 {
		return "", errors.New("proc: proxy with an empty allowlist: a sandbox without hosts needs no proxy")
	}
	list, key, err := hostrule.ParseList(allow)
	if err != nil {
		return "", fmt.Errorf("proc: network allowlist: %w", err)
	}
	proxies.mu.Lock()
	defer proxies.mu.Unlock()
	if sock, ok := proxies.sockets[key]; ok {
		return sock, nil
	}
	if proxies.dir == "" {
		dir, err := privateDir()
		if err != nil {
			return "", err
		}
		proxies.dir, proxies.sockets = dir, map[string]string{}
	}
	sub := filepath.Join(proxies.dir, strconv.Itoa(len(proxies.sockets)))
	if err := os.Mkdir(sub, 0o755); err != nil {
		return "", fmt.Errorf("proc: proxy socket directory: %w", err)
	}
	if err := os.Chmod(sub, 0o755); err != nil { // past the umask
		return "", fmt.Errorf("proc: proxy socket directory: %w", err)
	}
	sock := filepath.Join(sub, ProxySocketName)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return "", fmt.Errorf("proc: proxy socket: %w", err)
	}
	if err := os.Chmod(sock, 0o666); err != nil {
		ln.Close()
		return "", fmt.Errorf("proc: proxy socket: %w", err)
	}
	p := newProxy(list)
	go p.srv.Serve(ln) //nolint:errcheck // serves until CloseProxies
	proxies.sockets[key] = sock
	proxies.servers = append(proxies.servers, p.srv)
	return sock, nil
}

// proxyDirPrefix begins the name of a process's proxy directory, which
// goes on with the process's pid and a random part:
// statgraph-proxy-<pid>-<random>.
const proxyDirPrefix = "statgraph-proxy-"

// privateDir makes the 0700 directory that holds the proxies' sockets,
// under the temporary directory, or under /tmp when that is too long a
// path for a unix socket (108 bytes). It first removes the directories
// left by processes that ended without CloseProxies (a kill -9, a
// crash): see sweepProxyDirs.
func privateDir() (string, error) {
	parent := os.TempDir()
	if len(parent) > 60 {
		parent = "/tmp"
	}
	sweepProxyDirs(parent)
	dir, err := os.MkdirTemp(parent, proxyDirPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", fmt.Errorf("proc: proxy directory: %w", err)
	}
	return dir, nil
}

// sweepProxyDirs removes the proxy directories in parent that belong to
// this user and to a process no longer alive, named by the pid in their
// name. A directory named without a pid (an older statgraph's) goes once
// it is a minute old and none of its sockets accepts a connection.
// Failures are ignored: a directory left behind holds only dead sockets.
func sweepProxyDirs(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), proxyDirPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		if info, err := e.Info(); err != nil || !fsutil.OwnedByMe(info) {
			continue
		}
		pidText, _, named := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		switch {
		case named && err == nil:
			if fsutil.ProcessAlive(pid) {
				continue
			}
		case !staleUnnamed(dir):
			continue
		}
		os.RemoveAll(dir)
	}
}

// staleUnnamed reports whether dir, a proxy directory named without a
// pid, is over a minute old with no socket in it accepting a connection.
func staleUnnamed(dir string) bool {
	info, err := os.Stat(dir)
	if err != nil || time.Since(info.ModTime()) < time.Minute {
		return false
	}
	socks, _ := filepath.Glob(filepath.Join(dir, "*", ProxySocketName))
	for _, sock := range socks {
		if c, err := net.DialTimeout("unix", sock, time.Second); err == nil {
			c.Close()
			return false
		}
	}
	return true
}

// CloseProxies stops the process's proxies and removes their directory.
// A process calls it as it ends (statgraph's commands do); a sandbox still
// running loses its network. Later ProxySocket calls start new proxies.
func CloseProxies() {
	proxies.mu.Lock()
	defer proxies.mu.Unlock()
	for _, srv := range proxies.servers {
		srv.Close()
	}
	if proxies.dir != "" {
		os.RemoveAll(proxies.dir)
	}
	proxies.dir, proxies.sockets, proxies.servers = "", nil, nil
}

// proxy is one allowlisting proxy.
type proxy struct {
	allow   hostrule.List
	srv     *http.Server
	forward *httputil.ReverseProxy
	// upstream is the proxy statgraph's own environment names for a
	// target (HTTPS_PROXY, HTTP_PROXY, NO_PROXY, as Go reads them): a
	// corporate proxy the sandbox's traffic must go through; nil for none.
	upstream func(*url.URL) (*url.URL, error)
}

func newProxy(allow hostrule.List) *proxy {
	p := &proxy{allow: allow, upstream: httpproxy.FromEnvironment().ProxyFunc()}
	p.srv = &http.Server{
		Handler:           p,
		MaxHeaderBytes:    ProxyMaxHeaderBytes,
		ReadHeaderTimeout: ProxyHeaderTimeout,
		IdleTimeout:       ProxyIdleTimeout,
		ErrorLog:          log.New(io.Discard, "", 0), // a client's bad request is its own business
	}
	tr := &http.Transport{
		Proxy:                  nil, // the proxy reaches targets directly
		DialContext:            p.dial,
		MaxIdleConns:           64,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    proxyDialTimeout,
		ResponseHeaderTimeout:  ProxyIdleTimeout,
		MaxResponseHeaderBytes: ProxyMaxHeaderBytes,
	}
	p.forward = &httputil.ReverseProxy{
		// The outgoing request is the incoming one, its absolute URL and
		// Host included, less the hop-by-hop headers.
		Rewrite:   func(*httputil.ProxyRequest) {},
		Transport: tr,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			http.Error(w, "statgraph sandbox proxy: "+err.Error(), http.StatusBadGateway)
		},
	}
	return p
}

// ServeHTTP tunnels CONNECT and forwards absolute-URL requests whose host
// is allowed.
func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var hostport string
	switch {
	case r.Method == http.MethodConnect:
		hostport = r.Host
	case r.URL.IsAbs() && (r.URL.Scheme == "http" || r.URL.Scheme == "https"):
		hostport = r.URL.Host
		if r.URL.Port() == "" {
			hostport = net.JoinHostPort(r.URL.Hostname(), map[string]string{"http": "80", "https": "443"}[r.URL.Scheme])
		}
	default:
		http.Error(w, "statgraph sandbox proxy: want CONNECT host:port or a request for an absolute http:// URL", http.StatusBadRequest)
		return
	}
	host, port, err := splitTarget(hostport)
	if err != nil {
		http.Error(w, "statgraph sandbox proxy: "+err.Error(), http.StatusBadRequest)
		return
	}
	if _, ok := p.allow.Match(host, port); !ok {
		http.Error(w, refusal(host, port), http.StatusForbidden)
		return
	}
	if r.Method == http.MethodConnect {
		p.tunnel(w, r, hostport)
		return
	}
	p.forward.ServeHTTP(w, r)
}

// refusal is the body of a 403: which host, and how to allow it.
func refusal(host string, port int) string {
	return fmt.Sprintf("statgraph sandbox: %s (port %d) is not in this sandbox's network allowlist, so the request was refused.\n"+
		"To allow it, add it to tasks.json, in the task or in \"defaults\": \"sandbox\": {\"network\": [%q]}; "+
		"\"network\": true gives the full network.", host, port, host)
}

// splitTarget splits host:port, the port required and numeric.
func splitTarget(hostport string) (string, int, error) {
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", 0, fmt.Errorf("target %q: want host:port", hostport)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 1 || port > 65535 || host == "" {
		return "", 0, fmt.Errorf("target %q: want host:port with a port from 1 to 65535", hostport)
	}
	return host, port, nil
}

// tunnel answers a CONNECT: it connects to hostport, says 200 and copies
// bytes both ways until either side closes or nothing moves for
// ProxyIdleTimeout.
func (p *proxy) tunnel(w http.ResponseWriter, r *http.Request, hostport string) {
	target, err := p.dial(r.Context(), "tcp", hostport)
	if err != nil {
		http.Error(w, "statgraph sandbox proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer target.Close()
	client, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, "statgraph sandbox proxy: "+err.Error(), http.StatusInternalServerError)
		return
	}
	defer client.Close()
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	// Bytes the client sent after its request, already read into buf.
	if n := buf.Reader.Buffered(); n > 0 {
		b, _ := buf.Reader.Peek(n)
		if _, err := target.Write(b); err != nil {
			return
		}
	}
	Splice(client, target, ProxyIdleTimeout)
}

// dial connects to hostport through the upstream proxy when statgraph's
// environment names one for it (the upstream resolves the name; it is the
// user's own proxy, so its address is not checked). Otherwise it resolves
// hostport's name itself and connects to the first address
// the matching rule allows (see allowedAddr).
func (p *proxy) dial(ctx context.Context, network, hostport string) (net.Conn, error) {
	host, port, err := splitTarget(hostport)
	if err != nil {
		return nil, err
	}
	rule, ok := p.allow.Match(host, port)
	if !ok {
		return nil, errors.New(strings.SplitN(refusal(host, port), "\n", 2)[0])
	}
	ctx, cancel := context.WithTimeout(ctx, proxyDialTimeout)
	defer cancel()
	scheme := "https"
	if port == 80 {
		scheme = "http"
	}
	if up, err := p.upstream(&url.URL{Scheme: scheme, Host: hostport}); err != nil {
		return nil, fmt.Errorf("the proxy statgraph's environment names (HTTPS_PROXY, HTTP_PROXY): %w", err)
	} else if up != nil {
		return dialThrough(ctx, up, hostport)
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		addrs = []netip.Addr{ip}
	} else if addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	var d net.Dialer
	err = fmt.Errorf("%s resolves only to addresses a sandbox may not reach (loopback, link-local); allow the address itself to reach it", host)
	for _, ip := range addrs {
		if !hostrule.AllowedAddr(rule, ip) {
			continue
		}
		var c net.Conn
		if c, err = d.DialContext(ctx, network, netip.AddrPortFrom(ip.Unmap(), uint16(port)).String()); err == nil {
			return c, nil
		}
	}
	return nil, err
}
