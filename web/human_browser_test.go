package web_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	openai "github.com/sashabaranov/go-openai"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/llm/llmtest"
	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/web"
)

// steerModel plans modelPlan and writes "attempt <n>" to out.txt on each
// executor turn; the server records the requests.
type steerModel struct {
	*llmtest.Server
	mu     sync.Mutex
	writes int
}

const modelPlan = "the model's plan: write out.txt"

func newSteerModel(t *testing.T) *steerModel {
	m := &steerModel{Server: llmtest.NewServer(t)}
	m.SetFallback(func(req openai.ChatCompletionRequest) llmtest.Reply {
		if len(req.Tools) == 0 {
			return llmtest.Text(`{"summary":"`+modelPlan+`","steps":["write it"],"files":["out.txt"],"test_strategy":"grep"}`, 7)
		}
		if req.Messages[len(req.Messages)-1].Role == openai.ChatMessageRoleTool {
			return llmtest.ToolCalls(3, llmtest.Finish("wrote out.txt"))
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		m.writes++
		return llmtest.ToolCalls(11, llmtest.WriteFile("out.txt", "attempt "+string(rune('0'+m.writes))+"\n"))
	})
	return m
}

func (m *steerModel) config() llm.Config {
	return llm.Config{BaseURL: m.BaseURL(), Model: llmtest.Model, HTTPClient: m.Client()}
}

// executorPrompts returns the first user message of each executor call.
func (m *steerModel) executorPrompts() []string {
	var out []string
	for _, r := range m.Requests() {
		if len(r.Tools) == 0 || r.Messages[len(r.Messages)-1].Role == openai.ChatMessageRoleTool {
			continue
		}
		for _, msg := range r.Messages {
			if msg.Role == openai.ChatMessageRoleUser {
				out = append(out, msg.Content)
				break
			}
		}
	}
	return out
}

// In a real browser: a task with approve_plan shows the model's plan on
// its card once planned; the person edits it in the box and approves the
// edited plan, and the executor is given the edited plan, not the
// model's.
func TestBrowserPlanApprovalEdited(t *testing.T) {
	m := newSteerModel(t)
	c := newControl(t, `{"tasks": [{"id": 1, "title": "write out", "approve_plan": true, "test_cmd": "grep -q attempt out.txt"}]}`, m.config())
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
	assert.Contains(t, plan, modelPlan)
	assert.Empty(t, m.executorPrompts(), "nothing runs before the plan is approved")

	edited := `{"summary": "the person's plan: write out.txt with care", "steps": ["write it"]}`
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(css(box+` textarea.plan-text`), edited),
		chromedp.Click(css(box+` button[data-answer="edit"]`)),
		chromedp.WaitVisible(card("1", "done"))), "approve the edited plan from the page")
	require.NoError(t, c.Wait(ctx))
	prompts := m.executorPrompts()
	require.Len(t, prompts, 1)
	assert.Contains(t, prompts[0], "the person's plan: write out.txt with care")
	assert.NotContains(t, prompts[0], modelPlan)
}

// In a real browser: on a done task's diff the person clicks a line,
// writes a comment, adds it and sends the task back; a run makes a new
// attempt whose prompt holds the comment as file:line: text, and the task
// is done again.
func TestBrowserReviewSendBack(t *testing.T) {
	m := newSteerModel(t)
	c := newControl(t, `{"tasks": [{"id": 1, "title": "write out", "test_cmd": "grep -q attempt out.txt"}]}`, m.config())
	require.NoError(t, c.Start(t.Context(), control.StartOptions{}))
	require.NoError(t, c.Wait(t.Context()))
	require.Len(t, m.executorPrompts(), 1)
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
	require.Eventually(t, func() bool { return len(m.executorPrompts()) == 2 }, 60*time.Second, 50*time.Millisecond, "a new attempt")
	require.NoError(t, chromedp.Do(ctx, chromedp.WaitVisible(card("1", "done"))))
	require.NoError(t, c.Wait(ctx))
	assert.Contains(t, m.executorPrompts()[1], "out.txt:1: say hello instead", "the comment is the new attempt's feedback")
	assert.False(t, strings.Contains(m.executorPrompts()[0], "say hello"))
	ts, err := c.Tasks(ctx)
	require.NoError(t, err)
	assert.Equal(t, "done", ts[0].Status)
}
