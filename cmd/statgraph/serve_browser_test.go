package main

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/browsertest"
)

// The address serve prints logs a real browser in: the board loads and
// its event stream connects, the token has left the address bar, and the
// cookie that replaced it is out of the page's scripts' reach (HttpOnly).
// The same server's page, opened without the token, is refused.
func TestServePrintedURLLogsBrowserIn(t *testing.T) {
	file := planRepo(t)
	base, open := serve(t, "--addr", "127.0.0.1:0", file)
	require.Contains(t, open, "?token=")

	ctx := browsertest.Browser(t, 60*time.Second)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(open),
		chromedp.WaitVisible(chromedp.CSS(`#board .card[data-id="1"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#conn[data-state="live"]`))), "open %s", open)
	href, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.href`))
	require.NoError(t, err)
	require.Equal(t, base+"/", href, "the token left the address bar")
	cookies, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.cookie`))
	require.NoError(t, err)
	require.Empty(t, cookies, "the token's cookie is HttpOnly")

	fresh := browsertest.Browser(t, 30*time.Second)
	require.NoError(t, chromedp.Do(fresh, chromedp.Navigate(base+"/")))
	body, err := chromedp.Run(fresh, chromedp.Evaluate[string](`document.body.innerText`))
	require.NoError(t, err)
	require.Contains(t, body, "a token is required")
}
