package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/internal/gittest"
	"github.com/statgraph/statgraph/mcpserver"
	"github.com/statgraph/statgraph/tasks"
)

// land moves a branch of the user's repository and starts agents: a
// client sees it as destructive and open-world; merge_queue only reads.
func TestLandToolAnnotations(t *testing.T) {
	cs := connect(t, control.Options{File: controltest.NewPlan(t, controltest.AskPlan)})
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	byName := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		byName[tool.Name] = tool
	}
	land := byName["land"]
	require.NotNil(t, land)
	require.NotNil(t, land.Annotations.DestructiveHint)
	assert.True(t, *land.Annotations.DestructiveHint)
	require.NotNil(t, land.Annotations.OpenWorldHint)
	assert.True(t, *land.Annotations.OpenWorldHint)
	assert.False(t, land.Annotations.ReadOnlyHint)
	require.NotNil(t, byName["merge_queue"])
	assert.True(t, byName["merge_queue"].Annotations.ReadOnlyHint)
	for _, name := range []string{"plan_from_spec", "expand_task", "analyze_complexity"} {
		a := byName[name].Annotations
		require.NotNil(t, a.DestructiveHint, name)
		assert.False(t, *a.DestructiveHint, name, "it only adds")
		require.NotNil(t, a.OpenWorldHint, name)
		assert.True(t, *a.OpenWorldHint, name, "it asks the model")
	}
}

// A land through the tools alone: land onto the checked-out main is
// refused (a conflict, with what to do), land onto another branch returns
// at once, and merge_queue shows task 1 landed, 2 blocked on its checks
// with the reason and 3 waiting for 2.
func TestLandThroughMCP(t *testing.T) {
	file := controltest.NewPlan(t, controltest.LandPlan)
	ctl, err := control.Open(control.Options{File: file, Run: control.RunOptions{Jobs: 1}})
	require.NoError(t, err)
	t.Cleanup(func() { ctl.Close() })
	cs := serve(t, ctl)
	call[mcpserver.RunState](t, cs, "run_pending", nil)
	require.NoError(t, ctl.Wait(t.Context()))
	repo := filepath.Dir(file)
	gittest.Git(t, repo, "branch", "landing")

	msg := refused(t, cs, "land", map[string]any{"onto": "main"})
	assert.Contains(t, msg, "git switch --detach")
	assert.Contains(t, msg, "(kind: conflict)")
	started := call[mcpserver.RunState](t, cs, "land", map[string]any{"onto": "landing"})
	assert.Equal(t, "landing", started.Onto)
	var q mcpserver.Queues
	for deadline := time.Now().Add(120 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		q = call[mcpserver.Queues](t, cs, "merge_queue", nil)
		if !q.Run.Running {
			break
		}
		require.True(t, time.Now().Before(deadline), "the land did not end")
	}
	require.Empty(t, q.Run.Error)
	require.Len(t, q.Queues, 1)
	got := q.Queues[0].Tasks
	require.Len(t, got, 3)
	assert.Equal(t, []string{dispatch.LandLanded, dispatch.LandChecks, dispatch.LandWaiting}, []string{got[0].State, got[1].State, got[2].State})
	assert.Contains(t, got[1].Reason, "its checks fail on the merge with landing")
	assert.Equal(t, gittest.Git(t, repo, "rev-parse", "landing"), got[0].Commit)
}

// plan_from_spec, expand_task and analyze_complexity through the tools,
// with the scripted model: a new tag that validates, two subtasks, and
// task-master's report where statgraph complexity writes it; a second
// plan into the same tag is refused with nothing written.
func TestSpecToolsThroughMCP(t *testing.T) {
	file := controltest.NewPlan(t, `{"master": {"tasks": [{"id": 1, "title": "one"}]}}`)
	cs := connect(t, control.Options{File: file, Run: control.RunOptions{Model: controltest.SpecModel(t)}})
	res := call[control.PlanResult](t, cs, "plan_from_spec", map[string]any{"spec": "# Word counter\n", "tag": "wc"})
	assert.Equal(t, []string{"1", "2"}, res.IDs)
	f, err := tasks.Load(file, "wc")
	require.NoError(t, err)
	require.Len(t, f.Tasks, 2)
	before, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Contains(t, refused(t, cs, "plan_from_spec", map[string]any{"spec": "x", "tag": "wc"}), "wc")
	after, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after))

	ex := call[mcpserver.Expanded](t, cs, "expand_task", map[string]any{"id": "1", "num": 2})
	assert.Equal(t, []string{"1.1", "1.2"}, ex.Subtasks)
	cx := call[mcpserver.Complexity](t, cs, "analyze_complexity", nil)
	require.Len(t, cx.Report.Analysis, 1)
	assert.Equal(t, 4, cx.Report.Analysis[0].ComplexityScore)
	assert.FileExists(t, filepath.Join(filepath.Dir(file), ".taskmaster", "reports", "task-complexity-report.json"))
}
