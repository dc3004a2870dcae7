package proc

import (
	"net"
	"sync"
	"time"
)

// splice.go is what the bridge (bridge.go) shares with the allowlisting
// proxy: the proxy's bounds and Splice. It is part of the small
// sandbox-init program (initprog.go), so it imports only the standard
// library.

// Bounds of the allowlisting proxy.
const (
	// ProxyMaxHeaderBytes bounds a request's line and headers.
	ProxyMaxHeaderBytes = 64 << 10
	// ProxyHeaderTimeout bounds the time to read a request's line and
	// headers.
	ProxyHeaderTimeout = 30 * time.Second
	// ProxyIdleTimeout ends a tunnel, or a kept-alive connection, after
	// this long with no byte either way; model responses streamed through
	// it send something well within it.
	ProxyIdleTimeout = 10 * time.Minute
	// proxyDialTimeout bounds resolving and connecting to a target.
	proxyDialTimeout = 30 * time.Second
)

// Splice copies bytes between a and b both ways until one side ends
// (closing the other's write side, or both when half-close is not
// possible), or until neither has sent anything for idle; it returns once
// both copies have stopped. The caller closes a and b.
func Splice(a, b net.Conn, idle time.Duration) {
	var last sync.Mutex // guards seen
	seen := time.Now()
	touch := func() { last.Lock(); seen = time.Now(); last.Unlock() }
	done := make(chan struct{})
	var wg sync.WaitGroup
	copyHalf := func(dst, src net.Conn) {
		defer wg.Done()
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				touch()
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			_ = dst.Close()
		}
	}
	wg.Add(2)
	go copyHalf(a, b)
	go copyHalf(b, a)
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(min(idle/4, 30*time.Second))
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
			last.Lock()
			quiet := time.Since(seen)
			last.Unlock()
			if quiet >= idle {
				a.Close()
				b.Close()
				<-done
				return
			}
		}
	}
}
