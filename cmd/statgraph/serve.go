package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/web"
)

// cmdServe serves the web UI and JSON API of one plan until interrupted.
func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", stderr)
	var c common
	c.register(fs)
	addr := fs.String("addr", "127.0.0.1:7777", "address to listen on")
	tokenFile := fs.String("token-file", "", "file holding the token every request must carry (default: a new random token, printed at start in the address to open)")
	noToken := fs.Bool("no-token", false, "serve without a token, loopback --addr only: every program on this machine (a check, an agent, another user) can then read and steer the plan")
	var rf runFlags
	rf.register(fs)
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	file, _, _, err := c.paths(pos)
	if err != nil {
		return usageError{err.Error()}
	}
	if _, err := load(file, c.tag, stderr); err != nil {
		return err
	}
	token, err := serveToken(*addr, *tokenFile, *noToken)
	if err != nil {
		return err
	}
	ro, err := rf.options()
	if err != nil {
		return err
	}
	// The runs started from the page are traced as statgraph run's are;
	// what is left is flushed when serve stops (after Close stops a run).
	tp, flush := tracingFromEnv(ctx, os.Getenv, stderr)
	defer flush()
	ro.Tracer, ro.Log = tp, stderr
	o := control.Options{File: file, Tag: c.tag, Repo: c.repo, Store: c.store, Run: ro}
	ctl, err := control.Open(o)
	if err != nil {
		return usageError{err.Error()}
	}
	defer ctl.Close()
	warnQueue(ctx, ctl, stderr)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return usagef("serve: listen on %s: %v; choose another --addr", *addr, err)
	}
	ctx, cancel := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer cancel()
	srv := &http.Server{
		Handler:           web.Handler(ctl, token),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx }, // ends event streams on shutdown
	}
	base := "http://" + ln.Addr().String()
	if token != "" {
		fmt.Fprintf(stdout, "statgraph: serving %s on %s/ (Ctrl-C to stop)\nopen %s\nscripts: Authorization: Bearer %s\n", file, base, web.LoginURL(base, token), token)
	} else {
		fmt.Fprintf(stderr, "warning: --no-token: any program on this machine (a check, an agent CLI, another user) can read and steer this plan through %s/\n", base)
		fmt.Fprintf(stdout, "statgraph: serving %s on %s/ (loopback only, no token; Ctrl-C to stop)\n", file, base)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(stderr, "statgraph: stopping: the run started here (if any) is stopped as by Ctrl-C")
	shut, done := context.WithTimeout(context.Background(), 10*time.Second)
	defer done()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// serveToken returns the token requests must carry: the content of
// tokenFile when given, else a new random one, or "" (none) with noToken,
// which only a loopback addr may have.
func serveToken(addr, tokenFile string, noToken bool) (string, error) {
	switch {
	case noToken && tokenFile != "":
		return "", usagef("serve: --no-token and --token-file contradict each other; give one")
	case noToken && !web.IsLoopback(addr):
		return "", usagef("serve: --no-token serves loopback only, and --addr %s is not loopback; leave --no-token out (a token is printed at start)", addr)
	case noToken:
		return "", nil
	case tokenFile != "":
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return "", usagef("serve: --token-file: %v", err)
		}
		t := strings.TrimSpace(string(b))
		if len(t) < 16 {
			return "", usagef("serve: the token in %s is %d characters; use at least 16 (e.g. openssl rand -hex 16 > %s)", tokenFile, len(t), tokenFile)
		}
		return t, nil
	}
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}
