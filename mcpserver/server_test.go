package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
	"github.com/statgraph/statgraph/mcpserver"
	"github.com/statgraph/statgraph/tasks"
)

var toolNames = []string{"add_task", "analyze_complexity", "answer_escalation", "expand_task", "get_task", "history", "land", "list_tasks", "merge_queue", "pick_candidate", "plan_from_spec", "reset_failed", "review_task", "run_pending", "status", "stop_run"}

// Every tool is listed with an input and an output schema; the fields
// with a fixed set of values declare it, so the assistant sees the
// choices.
func TestToolsDeclareTypedSchemas(t *testing.T) {
	cs := connect(t, control.Options{File: controltest.NewPlan(t, controltest.AskPlan)})
	res, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	props := map[string]map[string]any{}
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		assert.NotEmpty(t, tool.Description, tool.Name)
		require.NotNil(t, tool.InputSchema, tool.Name)
		require.NotNil(t, tool.OutputSchema, tool.Name)
		var in struct {
			Properties map[string]any `json:"properties"`
		}
		data, _ := json.Marshal(tool.InputSchema)
		require.NoError(t, json.Unmarshal(data, &in))
		props[tool.Name] = in.Properties
	}
	slices.Sort(names)
	assert.Equal(t, toolNames, names)
	enum := func(tool, field string) []any {
		p, _ := props[tool][field].(map[string]any)
		e, _ := p["enum"].([]any)
		return e
	}
	assert.Equal(t, []any{"retry", "skip", "abort", "approve", "edit", "reject"}, enum("answer_escalation", "answer"))
	assert.Contains(t, enum("list_tasks", "status"), "failed")
	assert.Contains(t, enum("list_tasks", "status"), "interrupted")
	assert.Equal(t, "object", props["add_task"]["task"].(map[string]any)["type"])
}

// A scripted run through the tools alone: run_pending returns at once and
// a second one is refused; task 1 escalates, status shows it waiting with
// its question, answer_escalation "retry" resumes it and the run ends with
// both tasks done; get_task and history then show both attempts with their
// feedback and what each changed.
func TestRunEscalatesAndIsAnsweredThroughTools(t *testing.T) {
	file := controltest.NewPlan(t, controltest.AskPlan)
	m := controltest.NewModel(t)
	cs := connect(t, control.Options{File: file, Run: control.RunOptions{Model: m.Config(), Jobs: 1}})

	list := call[mcpserver.TaskList](t, cs, "list_tasks", nil)
	require.Len(t, list.Tasks, 2)
	assert.Equal(t, tasks.StatusPending, list.Tasks[0].Status)
	assert.Equal(t, []string{"1"}, list.Tasks[1].Dependencies)

	started := call[mcpserver.RunState](t, cs, "run_pending", nil)
	assert.True(t, started.Running)
	msg := refused(t, cs, "run_pending", nil)
	assert.Contains(t, msg, "a run of this plan is going on")
	assert.Contains(t, msg, "stop_run")

	s := eventually(t, cs, 90*time.Second, "task 1 waiting", func(s mcpserver.Status) bool { return len(s.Waiting) == 1 })
	require.Equal(t, "1", s.Waiting[0].ID)
	require.NotNil(t, s.Waiting[0].Question)
	assert.Equal(t, 1, s.Waiting[0].Question.Attempts)
	assert.True(t, s.Run.Running)

	d := call[mcpserver.TaskDetail](t, cs, "get_task", map[string]any{"id": "1"})
	require.NotNil(t, d.Task.Question, "get_task shows the pending question")
	require.Len(t, d.Attempts, 1)
	assert.False(t, d.Attempts[0].Passed)
	plan, _, err := control.Paths(file, "", "", "")
	require.NoError(t, err)
	wip := filepath.Join(plan.WorkDir(), "1", "wip.txt")
	require.NoError(t, os.WriteFile(wip, []byte("work in progress\n"), 0o644))
	d = call[mcpserver.TaskDetail](t, cs, "get_task", map[string]any{"id": "1", "diff": true})
	assert.Contains(t, d.Uncommitted, "+work in progress", "the live workspace's uncommitted work")
	require.NoError(t, os.Remove(wip))

	msg = refused(t, cs, "answer_escalation", map[string]any{"id": "1", "answer": "maybe"})
	assert.Contains(t, msg, "answer")
	msg = refused(t, cs, "answer_escalation", map[string]any{"id": "2", "answer": "retry"})
	assert.Contains(t, msg, "task 2 is not waiting for an answer")
	msg = refused(t, cs, "answer_escalation", map[string]any{"id": "7", "answer": "retry"})
	assert.Contains(t, msg, "task 7 is not in")
	ans := call[mcpserver.Answered](t, cs, "answer_escalation", map[string]any{"id": "1", "answer": "retry"})
	assert.Equal(t, "retry", string(ans.Answer))

	s = eventually(t, cs, 90*time.Second, "the run's end", func(s mcpserver.Status) bool { return !s.Run.Running })
	assert.Equal(t, map[string]int{tasks.StatusDone: 2}, s.Counts, "%+v", s.Run)
	assert.Empty(t, s.Run.Error)
	done := call[mcpserver.TaskList](t, cs, "list_tasks", map[string]any{"status": "done"})
	assert.Len(t, done.Tasks, 2)

	d = call[mcpserver.TaskDetail](t, cs, "get_task", map[string]any{"id": "1", "diff": true})
	require.True(t, d.Ran)
	require.Len(t, d.Attempts, 2)
	assert.False(t, d.Attempts[0].Passed)
	assert.NotEmpty(t, d.Attempts[0].Feedback, "the failed attempt's feedback")
	assert.NotEmpty(t, d.Attempts[0].Errors, "the check's output")
	assert.Contains(t, d.Attempts[0].Log, "→ finish", "the agent's log tail")
	assert.Equal(t, []mcpserver.FileChange{{Path: "out.txt", Added: 1}}, d.Attempts[0].Changes)
	assert.True(t, d.Attempts[1].Passed)
	assert.Equal(t, []mcpserver.FileChange{{Path: "out.txt", Added: 1, Removed: 1}}, d.Attempts[1].Changes)
	assert.Equal(t, []mcpserver.FileChange{{Path: "out.txt", Added: 1}}, d.Changes)
	assert.Contains(t, d.Diff, "+fixed")

	h := call[control.History](t, cs, "history", map[string]any{"id": "1"})
	require.Len(t, h.Attempts, 2)
	assert.Empty(t, h.Attempts[0].Diff, "no diffs unless asked for")
	assert.Contains(t, h.Attempts[0].Log, "→ finish", "the agent's log tail")
	assert.Greater(t, h.Tokens, 0)
	h = call[control.History](t, cs, "history", map[string]any{"id": "1", "diffs": true})
	assert.Contains(t, h.Attempts[0].Diff, "+broken")
}

// Arguments from outside are refused with a message saying what was wrong
// and what to do: path tricks in ids, unknown ids, a status that does not
// exist, a task that does not validate (nothing written), resets of tasks
// that are not failed, a stop without a run.
func TestToolsRefuseBadArguments(t *testing.T) {
	file := controltest.NewPlan(t, controltest.AskPlan)
	cs := connect(t, control.Options{File: file})
	before, err := os.ReadFile(file)
	require.NoError(t, err)

	for _, id := range []string{"../1", "1/../../etc", "%2e%2e", "a\x00b", "/etc/passwd", ""} {
		for _, tool := range []string{"get_task", "history"} {
			msg := refused(t, cs, tool, map[string]any{"id": id})
			assert.Contains(t, msg, "is not a task id", "%s %q", tool, id)
		}
		msg := refused(t, cs, "answer_escalation", map[string]any{"id": id, "answer": "skip"})
		assert.Contains(t, msg, "is not a task id", "answer_escalation %q", id)
		msg = refused(t, cs, "reset_failed", map[string]any{"ids": []string{"1", id}})
		assert.Contains(t, msg, "ids[1]", "reset_failed %q", id)
	}
	msg := refused(t, cs, "get_task", map[string]any{"id": "9"})
	assert.Contains(t, msg, "task 9 is not in")
	assert.Contains(t, msg, "list_tasks")
	msg = refused(t, cs, "history", map[string]any{"id": "9"})
	assert.Contains(t, msg, "task 9 is not in")
	msg = refused(t, cs, "history", map[string]any{"id": "1"})
	assert.Contains(t, msg, "task 1 has not run yet")

	msg = refused(t, cs, "list_tasks", map[string]any{"status": "finished"})
	assert.Contains(t, msg, "status")
	msg = refused(t, cs, "get_task", map[string]any{"id": 3})
	assert.Contains(t, msg, "id")

	msg = refused(t, cs, "add_task", map[string]any{"task": map[string]any{"title": "x", "dependencies": []int{42}}})
	assert.Contains(t, msg, "nothing was written")
	assert.Contains(t, msg, "42")
	msg = refused(t, cs, "add_task", map[string]any{"task": map[string]any{"id": 1, "title": "again"}})
	assert.Contains(t, msg, "nothing was written")
	msg = refused(t, cs, "add_task", map[string]any{"task": "not an object"})
	assert.Contains(t, msg, "task")
	after, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "a refused task writes nothing")

	msg = refused(t, cs, "reset_failed", map[string]any{"ids": []string{"1"}})
	assert.Contains(t, msg, "task 1 is pending")
	msg = refused(t, cs, "reset_failed", map[string]any{"ids": []string{"8"}})
	assert.Contains(t, msg, "list_tasks")
	reset := call[mcpserver.ResetDone](t, cs, "reset_failed", nil)
	assert.Empty(t, reset.Reset)

	msg = refused(t, cs, "stop_run", nil)
	assert.Contains(t, msg, "no run is going on")

	// A run in a terminal holds the plan's lock: no run, add or reset here.
	lock, err := tasks.Lock(file)
	require.NoError(t, err)
	defer lock.Unlock()
	for tool, args := range map[string]any{"run_pending": nil, "reset_failed": nil,
		"add_task": map[string]any{"task": map[string]any{"title": "later"}}} {
		msg = refused(t, cs, tool, args)
		assert.Contains(t, msg, "a run of this plan is going on", tool)
		assert.Contains(t, msg, "Ctrl-C", tool)
	}
	after, err = os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "nothing was written while the plan was locked")
}

// add_task appends a task validated like the file; it then lists, and a
// task that depends on it is accepted.
func TestAddTask(t *testing.T) {
	file := controltest.NewPlan(t, controltest.AskPlan)
	cs := connect(t, control.Options{File: file})
	added := call[mcpserver.Added](t, cs, "add_task", map[string]any{"task": map[string]any{
		"title": "third", "dependencies": []int{2}, "executor": map[string]any{"command": []string{"true"}}, "test_cmd": "true"}})
	assert.Equal(t, "3", added.ID)
	assert.Equal(t, "third", added.Task.Title)
	assert.Equal(t, []string{"2"}, added.Task.Dependencies)
	added = call[mcpserver.Added](t, cs, "add_task", map[string]any{"task": json.RawMessage(`{"id": "x1", "title": "named", "dependencies": [3]}`)})
	assert.Equal(t, "x1", added.ID)
	list := call[mcpserver.TaskList](t, cs, "list_tasks", map[string]any{"status": "pending"})
	assert.Len(t, list.Tasks, 4)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Regexp(t, `"id": "x1",\s*"title": "named",\s*"dependencies"`, string(data), "the members keep the order they were sent in")
	f, err := tasks.Load(file, "")
	require.NoError(t, err, "the file stays valid")
	_, ok := f.Task("x1")
	require.True(t, ok, "x1 is in the file")
}

// stop_run stops the server's run gracefully: the running task is left
// interrupted; the next run continues it; answered "abort" it fails and
// its dependent is blocked, and reset_failed sends both back to pending.
func TestStopRunAndResetFailed(t *testing.T) {
	file := controltest.NewPlan(t, controltest.AskPlan)
	m := controltest.NewModel(t)
	m.SetHold(2 * time.Second)
	m.SetBroken(true)
	cs := connect(t, control.Options{File: file, Run: control.RunOptions{Model: m.Config(), Jobs: 1}})
	call[mcpserver.RunState](t, cs, "run_pending", nil)
	eventually(t, cs, 60*time.Second, "task 1 in its executor", func(s mcpserver.Status) bool {
		return len(s.Running) == 1 && s.Running[0].Node == "executor"
	})
	stopped := call[mcpserver.RunState](t, cs, "stop_run", nil)
	assert.False(t, stopped.Running)
	assert.Contains(t, stopped.Message, "interrupted")
	d := call[mcpserver.TaskDetail](t, cs, "get_task", map[string]any{"id": "1"})
	assert.Equal(t, tasks.StatusInterrupted, d.Task.Status, "%+v", d.Task)

	// Continue, and abort at the escalation: task 1 fails, 2 is blocked.
	m.SetHold(0)
	call[mcpserver.RunState](t, cs, "run_pending", nil)
	eventually(t, cs, 90*time.Second, "task 1 waiting", func(s mcpserver.Status) bool { return len(s.Waiting) == 1 })
	call[mcpserver.Answered](t, cs, "answer_escalation", map[string]any{"id": "1", "answer": "abort"})
	s := eventually(t, cs, 90*time.Second, "the run's end", func(s mcpserver.Status) bool { return !s.Run.Running })
	assert.Equal(t, map[string]int{tasks.StatusFailed: 1, tasks.StatusBlocked: 1}, s.Counts)
	reset := call[mcpserver.ResetDone](t, cs, "reset_failed", map[string]any{"ids": []string{"1"}})
	assert.Equal(t, []string{"1", "2"}, reset.Reset)
	s = call[mcpserver.Status](t, cs, "status", nil)
	assert.Equal(t, map[string]int{tasks.StatusPending: 2}, s.Counts)
}
