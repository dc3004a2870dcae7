// Package browsertest starts a real headless Chromium for the tests that
// drive statgraph's web UI (package web's and statgraph serve's), so both
// find, start and report on the browser the same way. It is internal:
// only statgraph's own tests use it.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// Chromium returns the path of Debian's chromium. Without it the test
// skips, except under CI (CI=true), where it fails.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("the browser tests need Chromium under CI: apt-get install -y chromium (.ci/run does)")
	}
	t.Skip("browser tests skipped: install Debian's chromium (apt-get install -y chromium) to run them")
	return ""
}

// Browser starts a headless Chromium and returns a context driving one
// tab, cancelled after timeout or when the test ends. When the test fails,
// a screenshot of the page goes to $STATGRAPH_TEST_ARTIFACTS (default:
// statgraph-test-artifacts in the temporary directory), named after the
// test.
func Browser(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Chromium(t)), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelTab := chromedp.NewContext(actx)
	require.NoError(t, chromedp.Do(bctx), "start chromium")
	ctx, cancel := context.WithTimeout(bctx, timeout)
	t.Cleanup(func() {
		if t.Failed() {
			dir := os.Getenv("STATGRAPH_TEST_ARTIFACTS")
			if dir == "" {
				dir = filepath.Join(os.TempDir(), "statgraph-test-artifacts")
			}
			sctx, scancel := context.WithTimeout(bctx, 10*time.Second)
			png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
			scancel()
			if err == nil && os.MkdirAll(dir, 0o755) == nil {
				p := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+".png")
				if os.WriteFile(p, png, 0o644) == nil {
					t.Logf("screenshot of the page: %s", p)
				}
			}
		}
		cancel()
		cancelTab()
		cancelAlloc()
	})
	return ctx
}
