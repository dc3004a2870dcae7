package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
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

// serve starts cmdServe with args and returns the base URL and token it
// printed; it stops when the test ends.
func serve(t *testing.T, args ...string) (url, token string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- cmdServe(ctx, args, &out, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	re := regexp.MustCompile(`on (http://\S+/)`)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			if tm := regexp.MustCompile(`token: (\S+)`).FindStringSubmatch(out.String()); tm != nil {
				token = tm[1]
			}
			return m[1], token
		}
	}
	t.Fatalf("serve printed no address: %q", out.String())
	return "", ""
}

func planRepo(t *testing.T) string {
	return controltest.NewPlan(t, `{"tasks": [{"id": 1, "title": "one"}]}`)
}

// On loopback serve needs no token; on any other address it prints a new
// one and refuses requests without it.
func TestServeTokenRule(t *testing.T) {
	file := planRepo(t)
	url, token := serve(t, "--addr", "127.0.0.1:0", file)
	require.Empty(t, token)
	res, err := http.Get(url + "api/tasks")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)

	url, token = serve(t, "--addr", "0.0.0.0:0", file)
	require.Len(t, token, 48)
	url = strings.Replace(url, "0.0.0.0", "127.0.0.1", 1)
	res, err = http.Get(url + "api/tasks")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	req, _ := http.NewRequest("GET", url+"api/tasks", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
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
