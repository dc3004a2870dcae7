package web_test

import (
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

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/internal/gittest"
	"github.com/statgraph/statgraph/tasks"
	"github.com/statgraph/statgraph/web"
)

// The spec operations through the JSON API: POST /api/plan writes a new
// tag of the served file from the document sent (an existing tag and an
// empty document are refused, nothing written), POST
// /api/tasks/{id}/expand adds subtasks, and POST /api/complexity writes
// task-master's report where statgraph complexity does.
func TestSpecThroughAPI(t *testing.T) {
	c := newControl(t, `{"master": {"tasks": [{"id": 1, "title": "one"}, {"id": 2, "title": "two", "status": "done"}]}}`, controltest.SpecModel(t))
	srv := httptest.NewServer(web.Handler(c, ""))
	defer srv.Close()

	code, out := postJSON(t, srv.URL+"/api/plan", `{"spec": "# Word counter\nCount the words of a file.\n", "tag": "wc"}`)
	require.Equal(t, http.StatusCreated, code, "%v", out)
	require.Equal(t, []any{"1", "2"}, out["IDs"])
	f, err := tasks.Load(c.File(), "wc")
	require.NoError(t, err, "the new tag validates")
	require.Len(t, f.Tasks, 2)
	require.Equal(t, []string{"1"}, f.Tasks[1].Dependencies)
	before, err := os.ReadFile(c.File())
	require.NoError(t, err)
	code, out = postJSON(t, srv.URL+"/api/plan", `{"spec": "again", "tag": "wc"}`)
	require.Equal(t, http.StatusUnprocessableEntity, code, "%v", out)
	require.Contains(t, out["error"], "wc")
	code, out = postJSON(t, srv.URL+"/api/plan", `{"spec": "  "}`)
	require.Equal(t, http.StatusBadRequest, code, "%v", out)
	require.Contains(t, out["error"], "requirements document is empty")
	after, err := os.ReadFile(c.File())
	require.NoError(t, err)
	require.Equal(t, string(before), string(after), "a refused plan writes nothing")

	code, out = postJSON(t, srv.URL+"/api/tasks/1/expand", `{"num": 2}`)
	require.Equal(t, http.StatusOK, code, "%v", out)
	require.Equal(t, []any{"1.1", "1.2"}, out["subtasks"])
	code, out = postJSON(t, srv.URL+"/api/tasks/2/expand", `{}`)
	require.Equal(t, http.StatusConflict, code, "%v", out)
	require.Contains(t, out["error"], "only a pending task can be expanded")

	code, out = postJSON(t, srv.URL+"/api/complexity", `{}`)
	require.Equal(t, http.StatusOK, code, "%v", out)
	path := filepath.Join(filepath.Dir(c.File()), ".taskmaster", "reports", "task-complexity-report.json")
	require.Equal(t, path, out["path"])
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), `"complexityScore": 4`)
}

// ranForLand runs controltest.LandPlan to its end through c and makes the branch
// "landing" at the repository's head, for land to land onto (main is
// checked out).
func ranForLand(t *testing.T, c *control.Control) {
	t.Helper()
	require.NoError(t, c.Start(t.Context(), control.StartOptions{}))
	require.NoError(t, c.Wait(t.Context()))
	require.Empty(t, c.Run().Error)
	for _, id := range []string{"1", "2", "3"} {
		require.Equal(t, tasks.StatusDone, statusIn(t, c.File(), id), "task %s", id)
	}
	gittest.Git(t, c.Plan().Repo, "branch", "landing")
}

// waitLanded polls GET /api/land until no land runs, and returns it.
func waitLanded(t *testing.T, url string) web.LandResponse {
	t.Helper()
	for deadline := time.Now().Add(120 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var got web.LandResponse
		getJSON(t, url+"/api/land", &got)
		if !got.Run.Running {
			return got
		}
		require.True(t, time.Now().Before(deadline), "the land did not end: %+v", got)
	}
}

// POST /api/land lands the done tasks on a branch in the server's process
// (a checked-out branch and one that does not exist are refused first,
// nothing moved); GET /api/land shows the queue: 1 landed, 2 blocked on
// its checks with the reason, 3 waiting for 2; the branch moved to a tip
// holding task 1's work only.
func TestLandThroughAPI(t *testing.T) {
	c := newControl(t, controltest.LandPlan, llm.Config{})
	srv := httptest.NewServer(web.Handler(c, ""))
	defer srv.Close()
	ranForLand(t, c)
	repo := c.Plan().Repo
	mainTip := gittest.Git(t, repo, "rev-parse", "main")

	var empty web.LandResponse
	getJSON(t, srv.URL+"/api/land", &empty)
	require.Empty(t, empty.Queues, "land never ran")
	code, out := postJSON(t, srv.URL+"/api/land", `{"onto": "main"}`)
	require.Equal(t, http.StatusConflict, code, "%v", out)
	require.Contains(t, out["error"], "git switch --detach")
	code, out = postJSON(t, srv.URL+"/api/land", `{"onto": "nowhere"}`)
	require.Equal(t, http.StatusUnprocessableEntity, code, "%v", out)
	require.Contains(t, out["error"], "has no branch nowhere")
	code, out = postJSON(t, srv.URL+"/api/land", `{}`)
	require.Equal(t, http.StatusBadRequest, code, "%v", out)
	require.Equal(t, mainTip, gittest.Git(t, repo, "rev-parse", "main"))

	code, out = postJSON(t, srv.URL+"/api/land", `{"onto": "landing"}`)
	require.Equal(t, http.StatusAccepted, code, "%v", out)
	require.Equal(t, "landing", out["onto"])
	got := waitLanded(t, srv.URL)
	require.Empty(t, got.Run.Error)
	require.NotNil(t, got.Run.Landing)
	require.Equal(t, "landing", got.Run.Onto)
	require.Len(t, got.Queues, 1)
	q := got.Queues[0]
	require.Equal(t, "landing", q.Onto)
	require.Len(t, q.Tasks, 3)
	require.Equal(t, dispatch.LandLanded, q.Tasks[0].State)
	require.Equal(t, gittest.Git(t, repo, "rev-parse", "landing"), q.Tasks[0].Commit)
	require.Equal(t, dispatch.LandChecks, q.Tasks[1].State)
	require.Contains(t, q.Tasks[1].Reason, "its checks fail on the merge with landing")
	require.Equal(t, dispatch.LandWaiting, q.Tasks[2].State)
	require.Contains(t, q.Tasks[2].Reason, "waits for task 2")
	require.Equal(t, "README\na.txt\ntasks.json", strings.TrimSpace(gittest.Git(t, repo, "ls-tree", "--name-only", "landing")))
}

// In a real browser: the merge queue says nothing is landed yet; landing
// onto the checked-out main from the page shows the refusal with what to
// do; landing onto another branch shows the queue: task 1 landed, 2
// blocked on its checks with the reason, 3 waiting for 2.
func TestBrowserMergeQueue(t *testing.T) {
	c := newControl(t, controltest.LandPlan, llm.Config{})
	ranForLand(t, c)
	srv := serveTest(t, web.Handler(c, testToken))
	ctx := browser(t, 120*time.Second)
	row := func(id, state string) chromedp.CSS {
		return css(fmt.Sprintf(`#land .land-queue[data-onto="landing"] .land-row[data-id=%q][data-state=%q]`, id, state))
	}
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(web.LoginURL(srv.URL, testToken)),
		chromedp.WaitVisible(card("3", "done")),
		chromedp.WaitVisible(css(`#land-queues .hint`))), "the page with an empty queue")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(css(`#land-start`)),
		chromedp.WaitVisible(css(`#message.error`))), "land onto main from the page")
	require.Contains(t, textContaining(t, ctx, `#message`, "git switch --detach"), "has main checked out")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.SetValue(css(`#land-onto`), "landing"),
		chromedp.Click(css(`#land-start`)),
		chromedp.WaitVisible(row("1", "landed")),
		chromedp.WaitVisible(row("2", "blocked-on-checks")),
		chromedp.WaitVisible(row("3", "waiting")),
		chromedp.WaitVisible(css(`#run-state[data-running="false"]`))), "land onto landing from the page")
	require.Contains(t, text(t, ctx, `#land .land-row[data-id="2"] .land-reason`), "its checks fail on the merge with landing")
	require.Contains(t, text(t, ctx, `#land .land-row[data-id="3"] .land-reason`), "waits for task 2")
	require.Contains(t, text(t, ctx, `#land .land-row[data-id="1"] .land-reason`), gittest.Git(t, c.Plan().Repo, "rev-parse", "landing")[:12])
}
