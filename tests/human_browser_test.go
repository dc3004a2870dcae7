package tests

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
	"github.com/statgraph/statgraph/internal/browsertest"
	"github.com/statgraph/statgraph/web"
)

// A plan rejected from the web UI in a real browser while the built
// binary's run waits for the answer (run --wait-for-answers, no
// terminal): the card shows the model's plan, reject with a reason reaches
// the run, the task ends cancelled with that reason and the executor never
// runs.
func TestPlanRejectedInBrowser(t *testing.T) {
	t.Parallel()
	m := controltest.NewSteerModel(t)
	repo := newRepo(t, map[string]string{"tasks.json": controltest.ApprovalPlan})
	file := filepath.Join(repo, "tasks.json")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, done := startRun(ctx, t, repo, m, "run", noSandbox, "--wait-for-answers", "tasks.json")
	c, err := control.Open(control.Options{File: file, StoreOnly: true, Poll: 50 * time.Millisecond})
	require.NoError(t, err)
	defer c.Close()
	waitQuestion(t, c, "1", done)
	const token = "human-browser-token-0123456789"
	srv := httptest.NewServer(web.Handler(c, token))
	defer func() { srv.CloseClientConnections(); srv.Close() }()

	b := browsertest.Browser(t, 90*time.Second)
	box := `#board .card[data-id="1"] .approval`
	require.NoError(t, chromedp.Do(b,
		chromedp.Navigate(web.LoginURL(srv.URL, token)),
		chromedp.WaitVisible(chromedp.CSS(box+` textarea.plan-text`))), "the plan shows on the card")
	plan, err := chromedp.Run(b, chromedp.Value(chromedp.CSS(box+` textarea.plan-text`)))
	require.NoError(t, err)
	assert.Contains(t, plan, controltest.SteerPlan)
	require.NoError(t, chromedp.Do(b,
		chromedp.SendKeys(chromedp.CSS(box+` input.reject-reason`), "not this quarter"),
		chromedp.Click(chromedp.CSS(box+` button[data-answer="reject"]`))), "reject from the page")
	r := ended(t, done)
	task := readTasks(t, file)["1"]
	assert.Equal(t, "cancelled", task.Status, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.Equal(t, "plan rejected by the operator: not this quarter", task.StatusReason)
	assert.Empty(t, m.ExecutorPrompts(), "a rejected plan is never executed")
	require.NoError(t, chromedp.Do(b, chromedp.WaitVisible(chromedp.CSS(`#board .card[data-id="1"][data-status="cancelled"]`))), "the board shows it cancelled")
}
