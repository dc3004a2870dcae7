package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
	"github.com/statgraph/statgraph/web"
)

// In a real browser: a task with approve_plan shows the model's plan on
// its card once planned; the person edits it in the box and approves the
// edited plan, and the executor is given the edited plan, not the
// model's.
func TestBrowserPlanApprovalEdited(t *testing.T) {
	m := controltest.NewSteerModel(t)
	c := newControl(t, controltest.ApprovalPlan, m.Config())
	srv := serveTest(t, web.Handler(c, testToken))
	ctx := browser(t, 90*time.Second)
	box := `#board .card[data-id="1"] .approval`
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(web.LoginURL(srv.URL, testToken)),
		chromedp.WaitVisible(card("1", "pending")),
		chromedp.WaitVisible(css(`#conn[data-state="live"]`)),
		chromedp.Click(css(`#start`)),
		chromedp.WaitVisible(css(box+` textarea.plan-text`))), "the plan shows on the card")
	plan, err := chromedp.Run(ctx, chromedp.Value(css(box+` textarea.plan-text`)))
	require.NoError(t, err)
	assert.Contains(t, plan, controltest.SteerPlan)
	assert.Empty(t, m.ExecutorPrompts(), "nothing runs before the plan is approved")

	edited := `{"summary": "the person's plan: write out.txt with care", "steps": ["write it"]}`
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(css(box+` textarea.plan-text`), edited),
		chromedp.Click(css(box+` button[data-answer="edit"]`)),
		chromedp.WaitVisible(card("1", "done"))), "approve the edited plan from the page")
	require.NoError(t, c.Wait(ctx))
	prompts := m.ExecutorPrompts()
	require.Len(t, prompts, 1)
	assert.Contains(t, prompts[0], "the person's plan: write out.txt with care")
	assert.NotContains(t, prompts[0], controltest.SteerPlan)
}

// In a real browser: on a done task's diff the person clicks a line,
// writes a comment, adds it and sends the task back; a run makes a new
// attempt whose prompt holds the comment as file:line: text, and the task
// is done again.
func TestBrowserReviewSendBack(t *testing.T) {
	m := controltest.NewSteerModel(t)
	c := newControl(t, `{"tasks": [{"id": 1, "title": "write out", "test_cmd": "grep -q attempt out.txt"}]}`, m.Config())
	require.NoError(t, c.Start(t.Context(), control.StartOptions{}))
	require.NoError(t, c.Wait(t.Context()))
	require.Len(t, m.ExecutorPrompts(), 1)
	srv := serveTest(t, web.Handler(c, testToken))
	ctx := browser(t, 90*time.Second)
	line := `#detail .reviewable .line[data-file="out.txt"][data-line="1"]`
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(web.LoginURL(srv.URL, testToken)),
		chromedp.WaitVisible(card("1", "done")),
		chromedp.Click(css(`#board .card[data-id="1"] .title`)),
		chromedp.WaitVisible(css(line)),
		chromedp.Click(css(line)),
		chromedp.WaitVisible(css(line+`.picked`)),
		chromedp.SendKeys(css(`#detail .review .comment-text`), "say hello instead"),
		chromedp.Click(css(`#detail .review .add-comment`)),
		chromedp.WaitVisible(css(`#detail .review .comments .comment`))), "comment on line 1 of out.txt")
	require.Contains(t, text(t, ctx, `#detail .review .comments .comment`), "out.txt:1: say hello instead")
	require.NoError(t, chromedp.Do(ctx, chromedp.Click(css(`#detail .review .send-back`))), "send it back")
	require.Eventually(t, func() bool { return len(m.ExecutorPrompts()) == 2 }, 60*time.Second, 50*time.Millisecond, "a new attempt")
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(card("1", "done"))))
	require.NoError(t, c.Wait(ctx))
	assert.Contains(t, m.ExecutorPrompts()[1], "out.txt:1: say hello instead", "the comment is the new attempt's feedback")
	assert.False(t, strings.Contains(m.ExecutorPrompts()[0], "say hello"))
	ts, err := c.Tasks(ctx)
	require.NoError(t, err)
	assert.Equal(t, "done", ts[0].Status)
}
