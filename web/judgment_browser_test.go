package web_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/control/controltest"
	"github.com/statgraph/statgraph/web"
)

// In a real browser: a task whose plan waits for approval says "awaiting
// approval" on its card, not the planner's node; approving it from the
// card runs it to done.
func TestBrowserCardAwaitingApproval(t *testing.T) {
	m := controltest.NewSteerModel(t)
	c := newControl(t, `{"tasks": [{"id": 1, "title": "write out", "approve_plan": true, "test_cmd": "grep -q attempt out.txt"}]}`, m.Config())
	srv := serveTest(t, web.Handler(c, testToken))
	ctx := browser(t, 90*time.Second)
	box := `#board .card[data-id="1"] .approval`
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(web.LoginURL(srv.URL, testToken)),
		chromedp.WaitVisible(card("1", "pending")),
		chromedp.WaitVisible(css(`#conn[data-state="live"]`)),
		chromedp.Click(css(`#start`)),
		chromedp.WaitVisible(css(box+` textarea.plan-text`))), "the plan shows on the card")
	meta := textContaining(t, ctx, `#board .card[data-id="1"] .meta`, "awaiting approval")
	assert.Contains(t, meta, "awaiting approval")
	assert.NotContains(t, meta, "planner")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(css(box+` button[data-answer="approve"]`)),
		chromedp.WaitVisible(card("1", "done"))), "approve from the card")
	require.NoError(t, c.Wait(ctx))
}

// bestOfNTasks is one best-of-N task of three command candidates: 1 does
// not make its check pass, 2 and 3 do, 3 with the larger diff; every
// candidate gets an advisory warning, so all three run to their end and
// candidate 2 wins on the smallest diff.
const bestOfNTasks = `{"tasks": [{"id": 1, "title": "write ok.txt", "max_retries": 1, "test_cmd": "test -f ok.txt",
  "checks": [{"name": "style", "cmd": "false", "mode": "advisory"}],
  "candidates": [
    {"executor": {"command": ["sh", "-c", "echo no > no.txt"]}},
    {"executor": {"command": ["sh", "-c", "echo ok > ok.txt"]}},
    {"executor": {"command": ["sh", "-c", "printf 'ok\\nand\\nmore\\n' > ok.txt; echo x > x.txt"]}}]}]}`

// In a real browser: a best-of-N task's candidates are a table on its
// detail, side by side (status, warnings, diff lines, branch), the winner
// marked; only a passing candidate that is not the winner has a pick
// button, and picking candidate 3 there makes it the winner, in the table
// and in the task's record.
func TestBrowserCandidatesTable(t *testing.T) {
	c := newControl(t, bestOfNTasks, llm.Config{})
	srv := serveTest(t, web.Handler(c, testToken))
	ctx := browser(t, 120*time.Second)
	table := `#detail .candidates table`
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(web.LoginURL(srv.URL, testToken)),
		chromedp.WaitVisible(card("1", "pending")),
		chromedp.WaitVisible(css(`#conn[data-state="live"]`)),
		chromedp.Click(css(`#start`)),
		chromedp.WaitVisible(card("1", "done"))), "the task runs to done")
	require.NoError(t, c.Wait(ctx))
	clickUntil(t, ctx, `#board .card[data-id="1"] .title`, table+` tr.winner[data-k="2"]`)

	rows := map[string][]string{}
	for _, k := range []string{"1", "2", "3"} {
		rows[k] = strings.Split(text(t, ctx, table+` tr[data-k="`+k+`"]`), "\t")
	}
	for k, cells := range rows {
		line := strings.Join(cells, " | ")
		switch k {
		case "1":
			assert.Contains(t, line, "failed", "candidate 1's row")
		default:
			assert.Contains(t, line, "done", "candidate %s's row", k)
			assert.Contains(t, line, "@"+k, "candidate %s's row names its branch", k)
		}
	}
	count := func(sel string) int {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+jsString(sel)+`).length`))
		require.NoError(t, err)
		return n
	}
	assert.Equal(t, 3, count(table+` tr[data-k]`), "one row per candidate")
	assert.Equal(t, 1, count(table+` button.pick`), "only candidate 3 can be picked: 1 failed, 2 is the winner")
	assert.Equal(t, 1, count(table+` tr[data-k="3"] button.pick`))

	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(css(table+` tr[data-k="3"] button.pick`)),
		chromedp.WaitVisible(css(table+` tr.winner[data-k="3"]`))), "picking candidate 3 from the page")
	h, err := c.History(context.Background(), "1", false)
	require.NoError(t, err)
	require.NotNil(t, h.Selection)
	assert.Equal(t, 3, h.Selection.Winner, "the task's record has the picked candidate")
}

// clickUntil clicks sel until show is visible: the board is drawn again
// when the run ends, which can replace the card between finding it and
// clicking it.
func clickUntil(t *testing.T, ctx context.Context, sel, show string) {
	t.Helper()
	var err error
	for range 5 {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = chromedp.Do(wctx, chromedp.Click(css(sel)), chromedp.WaitVisible(css(show)))
		cancel()
		if err == nil {
			return
		}
	}
	require.NoError(t, err, "click %s until %s shows", sel, show)
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
