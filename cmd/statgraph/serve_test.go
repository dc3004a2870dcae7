package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/control/controltest"
)

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// serve starts cmdServe with args and returns the base URL it serves on
// and the address it printed to open (with the token in it; the base URL
// when it printed none); it stops when the test ends.
func serve(t *testing.T, args ...string) (base, open string) {
	t.Helper()
	base, open, _ = serveErr(t, args...)
	return base, open
}

// serveErr is serve that also returns what cmdServe wrote to stderr.
func serveErr(t *testing.T, args ...string) (base, open string, stderr *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() { done <- cmdServe(ctx, args, &out, &errOut) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	re := regexp.MustCompile(`on (http://[^/\s]+)/`)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			open = m[1] + "/"
			if om := regexp.MustCompile(`(?m)^open (http://\S+)`).FindStringSubmatch(out.String()); om != nil {
				open = om[1]
			}
			return m[1], open, &errOut
		}
	}
	t.Fatalf("serve printed no address: %q", out.String())
	return "", "", nil
}

// tokenOf returns the token in the query of an address serve printed.
func tokenOf(t *testing.T, open string) string {
	t.Helper()
	u, err := url.Parse(open)
	require.NoError(t, err)
	return u.Query().Get("token")
}

// request sends method path (with a JSON body for POST) to base, with the
// bearer token when it is not "", and returns the status.
func request(t *testing.T, method, base, path, token string) int {
	t.Helper()
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(`{"answer": "skip"}`)
	}
	req, err := http.NewRequest(method, base+path, body)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	return res.StatusCode
}

func planRepo(t *testing.T) string {
	return controltest.NewPlan(t, `{"tasks": [{"id": 1, "title": "one"}]}`)
}

// On loopback too, serve makes a token, prints the address to open with
// it, and refuses every request without it (401): the API, the event
// stream, an escalation's answer, stopping a run, the page. (Before,
// loopback needed no token, and any program on the machine, a sandboxed
// check included, could answer another task's escalation.)
func TestServeTokenOnLoopback(t *testing.T) {
	file := planRepo(t)
	base, open := serve(t, "--addr", "127.0.0.1:0", file)
	for _, r := range []struct{ method, path string }{
		{"GET", "/api/tasks"}, {"GET", "/api/events"}, {"GET", "/api/tasks/1"}, {"GET", "/"},
		{"POST", "/api/tasks/1/answer"}, {"POST", "/api/stop"}, {"POST", "/api/run"},
	} {
		require.Equal(t, http.StatusUnauthorized, request(t, r.method, base, r.path, ""), "%s %s without the token", r.method, r.path)
		require.Equal(t, http.StatusUnauthorized, request(t, r.method, base, r.path, "not-the-token"), "%s %s with a wrong token", r.method, r.path)
	}
	token := tokenOf(t, open)
	require.Len(t, token, 48, "printed: open %s", open)
	require.Equal(t, http.StatusOK, request(t, "GET", base, "/api/tasks", token))
	require.Equal(t, http.StatusConflict, request(t, "POST", base, "/api/tasks/1/answer", token), "with the token the answer reaches the plan (no question pending)")

	_, other := serve(t, "--addr", "127.0.0.1:0", file)
	require.NotEqual(t, token, tokenOf(t, other), "a new token each time")
}

// --no-token brings back the old behaviour on loopback, with a warning;
// it is refused with any other address or with --token-file.
func TestServeNoToken(t *testing.T) {
	file := planRepo(t)
	base, open, stderr := serveErr(t, "--addr", "127.0.0.1:0", "--no-token", file)
	require.Equal(t, base+"/", open, "no token in the address")
	require.Equal(t, http.StatusOK, request(t, "GET", base, "/api/tasks", ""))
	require.Contains(t, stderr.String(), "warning: --no-token")

	err := cmdServe(context.Background(), []string{"--addr", "0.0.0.0:0", "--no-token", file}, io.Discard, io.Discard)
	require.ErrorIs(t, err, errUsage)
	require.Contains(t, err.Error(), "loopback only")
	tf := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tf, []byte("0123456789abcdef0123\n"), 0o600))
	err = cmdServe(context.Background(), []string{"--addr", "127.0.0.1:0", "--no-token", "--token-file", tf, file}, io.Discard, io.Discard)
	require.ErrorIs(t, err, errUsage)
}

// Any other address needs the token too; --token-file gives it.
func TestServeTokenRule(t *testing.T) {
	file := planRepo(t)
	base, open := serve(t, "--addr", "0.0.0.0:0", file)
	token := tokenOf(t, open)
	require.Len(t, token, 48)
	base = strings.Replace(base, "0.0.0.0", "127.0.0.1", 1)
	require.Equal(t, http.StatusUnauthorized, request(t, "GET", base, "/api/tasks", ""))
	require.Equal(t, http.StatusOK, request(t, "GET", base, "/api/tasks", token))

	tf := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tf, []byte("0123456789abcdef0123\n"), 0o600))
	base, open = serve(t, "--addr", "127.0.0.1:0", "--token-file", tf, file)
	require.Equal(t, "0123456789abcdef0123", tokenOf(t, open))
	require.Equal(t, http.StatusUnauthorized, request(t, "GET", base, "/api/tasks", ""))
	require.Equal(t, http.StatusOK, request(t, "GET", base, "/api/tasks", "0123456789abcdef0123"))
}

// A token file shorter than 16 characters is refused before listening.
func TestServeShortTokenFileRefused(t *testing.T) {
	file := planRepo(t)
	tf := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tf, []byte("short\n"), 0o600))
	err := cmdServe(context.Background(), []string{"--addr", "0.0.0.0:0", "--token-file", tf, file}, io.Discard, io.Discard)
	require.ErrorIs(t, err, errUsage)
	require.Contains(t, err.Error(), "at least 16")
}
