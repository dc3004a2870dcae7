package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/llm/llmtest"
	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
	"github.com/statgraph/statgraph/internal/pgtest"
	"github.com/statgraph/statgraph/queue"
	"github.com/statgraph/statgraph/statgraph/checkpoint/postgres"
	"github.com/statgraph/statgraph/web"
)

// In a real browser, a run started from the page on a priced model shows
// each task's cost on its card and the plan's total beside its tokens,
// equal to the cost the API gives (tokens at the run's prices); the
// card's cost is a dollar amount, not "cost unknown".
func TestBrowserCost(t *testing.T) {
	m := controltest.NewModel(t)
	file := controltest.NewPlan(t, `{"tasks": [{"id": 1, "title": "write fixed", "max_retries": 3, "test_cmd": "grep -q fixed out.txt"}]}`)
	prices := llm.Prices{llmtest.Model: {Input: 1000, CachedInput: 1000, Output: 3000}}
	c, err := control.Open(control.Options{File: file, Run: control.RunOptions{Model: m.Config(), Jobs: 1, Prices: prices}, Poll: 50 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	srv := serveTest(t, web.Handler(c, testToken))
	ctx := browser(t, 60*time.Second)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(web.LoginURL(srv.URL, testToken)),
		chromedp.WaitVisible(card("1", "pending")),
		chromedp.WaitVisible(css(`#conn[data-state="live"]`)),
		chromedp.Click(css(`#start`)),
		chromedp.WaitVisible(card("1", "done")),
		chromedp.WaitVisible(css(`#run-state[data-running="false"]`))))
	require.NoError(t, c.Wait(ctx))
	infos, err := c.Tasks(context.Background())
	require.NoError(t, err)
	require.Len(t, infos, 1)
	require.NotNil(t, infos[0].CostUSD, "the API's cost of task 1")
	require.Positive(t, infos[0].Tokens)
	want := fmt.Sprintf("$%.4f", *infos[0].CostUSD)
	meta := textContaining(t, ctx, `#board .card[data-id="1"] .meta`, want)
	assert.Contains(t, meta, fmt.Sprintf("%d tokens · %s", infos[0].Tokens, want), "the card's tokens and cost")
	assert.NotContains(t, meta, "cost unknown")
	spend := textContaining(t, ctx, `#spend`, want)
	assert.Equal(t, fmt.Sprintf("%d tokens · %s", infos[0].Tokens, want), spend, "the plan's total")
}

// In a real browser, the Workers panel lists the workers of the queue the
// plan's runs used: hidden with none; a worker that heartbeats shows alive
// with its host and id; once it stops, the panel (polled every 5 s) shows
// it gone.
func TestBrowserWorkersPanel(t *testing.T) {
	db := pgtest.Database(t)
	pool, err := queue.Open(context.Background(), db)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	_, err = postgres.New(context.Background(), pool) // the checkpoints' schema, as a worker makes it
	require.NoError(t, err)
	file := controltest.NewPlan(t, `{"tasks": [{"id": 1, "title": "one"}]}`)
	c, err := control.Open(control.Options{File: file, Queue: db, Run: control.RunOptions{Jobs: 1}, Poll: 50 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	srv := serveTest(t, web.Handler(c, testToken))
	ctx := browser(t, 60*time.Second)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(web.LoginURL(srv.URL, testToken)),
		chromedp.WaitVisible(card("1", "pending"))))
	hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("workers").hidden`))
	require.NoError(t, err)
	assert.True(t, hidden, "no worker yet: the panel is hidden")

	w := &queue.Worker{Pool: pool, ID: uuid.New()}
	hctx, stop := context.WithCancel(context.Background())
	beat := make(chan error, 1)
	go func() { beat <- w.Heartbeat(hctx, 2) }()
	t.Cleanup(func() { stop(); <-beat })
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(css(`#workers #worker-list li.worker[data-alive="true"]`))))
	line := text(t, ctx, `#worker-list li.worker`)
	assert.True(t, strings.HasPrefix(line, "alive · "), line)
	assert.Contains(t, line, w.ID.String()[:8])
	assert.Contains(t, line, "idle")

	stop()
	require.NoError(t, <-beat)
	beat <- nil // for the cleanup
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(css(`#worker-list li.worker[data-alive="false"]`))))
	assert.True(t, strings.HasPrefix(text(t, ctx, `#worker-list li.worker`), "gone · "))
}
