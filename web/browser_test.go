package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/control/controltest"
	"github.com/statgraph/statgraph/internal/browsertest"
	"github.com/statgraph/statgraph/web"
)

// serveTest serves h until the test ends, cutting open event streams then.
func serveTest(t testing.TB, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// testToken is the token the browser tests' servers require; the browser
// logs in through web.LoginURL, the address statgraph serve prints.
const testToken = "browser-test-token-0123456789"

// browser starts a headless Chromium (browsertest.Browser).
func browser(t testing.TB, timeout time.Duration) context.Context {
	return browsertest.Browser(t, timeout)
}

func card(id, status string) chromedp.CSS {
	return chromedp.CSS(fmt.Sprintf(`#board .card[data-id=%q][data-status=%q]`, id, status))
}

// text returns the text of the element sel. The page re-renders a task's
// details when an event arrives, which can replace the element between
// finding it and reading it ("No node with given id found"): then it is
// looked up again, for up to 5 s.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err == nil || time.Now().After(deadline) || !strings.Contains(err.Error(), "No node with given id") {
			require.NoError(t, err, "text of %s", sel)
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// textContaining waits up to 10 s for the text of sel to contain want
// (the page re-renders a task's details on each event, and a diff is
// filled in after its fetch returns), then returns the last text read.
func textContaining(t *testing.T, ctx context.Context, sel, want string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := text(t, ctx, sel)
		if strings.Contains(s, want) || time.Now().After(deadline) {
			return s
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type css = chromedp.CSS

// In a real browser, while a scripted run goes on: the board shows the
// tasks moving, the graph highlights the running node, the failed
// attempt's feedback and diff appear, and the escalation answered "retry"
// from the page resumes the task to the end.
func TestBrowserRunAnswerRetry(t *testing.T) {
	m := controltest.NewModel(t)
	m.SetHold(300 * time.Millisecond)
	c := newControl(t, controltest.AskPlan, m.Config())
	srv := serveTest(t, web.Handler(c, testToken))
	ctx := browser(t, 60*time.Second)

	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		require.NoError(t, chromedp.Do(ctx, actions...), what)
	}
	run("the board lists the tasks",
		chromedp.Navigate(web.LoginURL(srv.URL, testToken)),
		chromedp.WaitVisible(card("1", "pending")),
		chromedp.WaitVisible(card("2", "pending")),
		chromedp.WaitVisible(css(`#graph svg #sg-node-executor`)),
		chromedp.WaitVisible(css(`#conn[data-state="live"]`)))
	run("start a run from the page",
		chromedp.Click(css(`#start`)),
		chromedp.WaitVisible(card("1", "in-progress")),
		chromedp.WaitVisible(css(`#graph .node.active`)))
	run("the escalation shows on the card",
		chromedp.WaitVisible(css(`#board .card[data-id="1"] .question button[data-answer="retry"]`)))
	// Work not committed in the live workspace shows with the task.
	wip := filepath.Join(c.Plan().WorkDir(), "1", "wip.txt")
	require.NoError(t, os.WriteFile(wip, []byte("work in progress\n"), 0o644))
	run("the task's detail",
		chromedp.Click(css(`#board .card[data-id="1"] .title`)),
		chromedp.WaitVisible(css(`#detail .attempt[data-n="1"] .feedback`)),
		chromedp.WaitVisible(css(`#detail .uncommitted-diff`)))
	require.Contains(t, textContaining(t, ctx, `#detail .uncommitted-diff .add`, "+work in progress"), "+work in progress", "the uncommitted work, coloured as added")
	require.NoError(t, os.Remove(wip))
	require.Contains(t, textContaining(t, ctx, `#detail .attempt[data-n="1"] .attempt-diff .add`, "+broken"), "+broken", "the failed attempt's diff, coloured as added")
	require.NotEmpty(t, strings.TrimSpace(text(t, ctx, `#detail .attempt[data-n="1"] .feedback`)), "the failed attempt's feedback")
	require.Contains(t, textContaining(t, ctx, `#detail .attempt[data-n="1"] .agent-tail`, `→ finish`), `→ finish {"summary":"wrote out.txt"}`, "the agent's log tail")
	run("answer retry from the page",
		chromedp.Click(css(`#board .card[data-id="1"] .question button[data-answer="retry"]`)),
		chromedp.WaitVisible(card("1", "done")),
		chromedp.WaitVisible(card("2", "done")),
		chromedp.WaitVisible(css(`#detail .attempt[data-n="2"] .attempt-diff`)))
	require.Contains(t, textContaining(t, ctx, `#detail .attempt[data-n="2"] .attempt-diff`, "+fixed"), "+fixed")
	run("the run ended", chromedp.WaitVisible(css(`#run-state[data-running="false"]`)))
	require.NoError(t, c.Wait(ctx))
}

// Model and repository text is shown as text: a task title with markup
// does not become elements.
func TestBrowserEscapesText(t *testing.T) {
	c := newControl(t, `{"tasks": [{"id": 1, "title": "<img src=x id=injected onerror=\"document.title='pwned'\">"}]}`, controltest.NewModel(t).Config())
	srv := serveTest(t, web.Handler(c, testToken))
	ctx := browser(t, 30*time.Second)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(web.LoginURL(srv.URL, testToken)), chromedp.WaitVisible(card("1", "pending"))))
	require.Contains(t, text(t, ctx, `#board .card[data-id="1"] .title`), "<img src=x")
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#injected").length`))
	require.NoError(t, err)
	require.Zero(t, n)
}
