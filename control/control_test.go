package control_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
	"github.com/statgraph/statgraph/statgraph/gate"
	"github.com/statgraph/statgraph/tasks"
)

// A run started through Control goes through its tasks; the subscriber sees
// them move; the escalation of task 1 waits as a question and the answer
// "retry" resumes it; its history then holds both attempts with their
// feedback and diffs.
func TestRunEscalationAnsweredRetryResumes(t *testing.T) {
	file := controltest.NewPlan(t, controltest.AskPlan)
	m := controltest.NewModel(t)
	c, err := control.Open(control.Options{File: file, Run: control.RunOptions{Model: m.Config(), Jobs: 1}, Poll: 50 * time.Millisecond})
	require.NoError(t, err)
	defer c.Close()
	sub := c.Subscribe(1024)
	defer sub.Close()

	require.NoError(t, c.Start(bg, control.StartOptions{}))
	err = c.Start(bg, control.StartOptions{})
	require.ErrorIs(t, err, control.ErrRunning, "a second concurrent run is refused")

	seen := waitFor(t, sub, 90*time.Second, "task 1's question", func(e control.Event) bool {
		return e.Kind == control.EventQuestion && e.Unit == "1"
	})
	require.Contains(t, kinds(seen), "task:1:"+tasks.StatusInProgress, "the board saw task 1 start")
	ts, err := c.Tasks(bg)
	require.NoError(t, err)
	require.Equal(t, "1", ts[0].ID)
	require.NotNil(t, ts[0].Question, "the pending question shows on the task")
	require.Equal(t, tasks.StatusInProgress, ts[0].Status)
	require.Equal(t, tasks.StatusPending, ts[1].Status)
	require.Equal(t, []string{"1"}, ts[1].Dependencies)

	// Work in the live workspace that no attempt committed shows in the
	// history, read without touching the workspace.
	wip := filepath.Join(c.Plan().WorkDir(), "1", "wip.txt")
	require.NoError(t, os.WriteFile(wip, []byte("work in progress\n"), 0o644))
	h, err := c.History(bg, "1", true)
	require.NoError(t, err)
	require.Contains(t, h.Uncommitted, "+work in progress", "the uncommitted work")
	require.NotContains(t, h.Uncommitted, "+broken", "committed work is not counted again")
	require.NoError(t, os.Remove(wip))

	require.Error(t, c.Answer("1", "maybe"))
	require.NoError(t, c.Answer("1", gate.AnswerRetry))
	require.ErrorIs(t, c.Answer("1", gate.AnswerRetry), control.ErrNoQuestion)

	waitFor(t, sub, 90*time.Second, "task 2 done", taskEvent("2", tasks.StatusDone))
	require.NoError(t, c.Wait(bg))
	info := c.Run()
	require.False(t, info.Running)
	require.Empty(t, info.Error)
	require.Len(t, info.Units, 2)
	for _, u := range info.Units {
		require.Equal(t, tasks.StatusDone, u.Status, "%+v", u)
	}

	h, err = c.History(bg, "1", true)
	require.NoError(t, err)
	require.Len(t, h.Attempts, 2)
	require.False(t, h.Attempts[0].Passed)
	require.NotEmpty(t, h.Attempts[0].Feedback, "the failed attempt's feedback")
	require.NotEmpty(t, h.Attempts[0].Errors, "the check's output")
	require.Contains(t, h.Attempts[0].Log, `→ finish {"summary":"wrote out.txt"}`, "the model's last reply, as the attempt's log tail")
	require.Contains(t, h.Attempts[0].Diff, "+broken")
	require.True(t, h.Attempts[1].Passed)
	require.Contains(t, h.Attempts[1].Diff, "+fixed")
	require.Contains(t, h.Diff, "+fixed")
	require.Greater(t, h.Tokens, 0)

	_, err = c.History(bg, "../1", true)
	require.ErrorIs(t, err, control.ErrNoTask)
	_, err = c.History(bg, "9", false)
	require.ErrorIs(t, err, control.ErrNoRun)
}

// Stop cancels the run as the first Ctrl-C does: the running task is left
// interrupted and a new Start continues it.
func TestStopInterruptsAndStartContinues(t *testing.T) {
	file := controltest.NewPlan(t, controltest.AskPlan)
	m := controltest.NewModel(t)
	m.SetHold(30 * time.Second)
	c, err := control.Open(control.Options{File: file, Run: control.RunOptions{Model: m.Config(), Jobs: 1}, Poll: 50 * time.Millisecond})
	require.NoError(t, err)
	defer c.Close()
	sub := c.Subscribe(1024)
	defer sub.Close()
	require.NoError(t, c.Start(bg, control.StartOptions{}))
	waitFor(t, sub, 60*time.Second, "task 1 executing", func(e control.Event) bool {
		return e.Kind == control.EventTask && e.Unit == "1" && e.Task.Node == "executor"
	})
	start := time.Now()
	require.NoError(t, c.Stop(true))
	require.Less(t, time.Since(start), 20*time.Second, "Stop does not wait for the held model call")
	require.NotEmpty(t, c.Run().Error)
	ts, err := c.Tasks(bg)
	require.NoError(t, err)
	require.Equal(t, tasks.StatusInterrupted, ts[0].Status)
	require.Error(t, c.Stop(false), "no run to stop")
}

// A run that another process holds (here the plan's lock taken as
// statgraph run takes it) makes Start, AddTask and Reset fail with
// ErrRunning, changing nothing.
func TestLockedPlanIsRefused(t *testing.T) {
	file := controltest.NewPlan(t, controltest.AskPlan)
	before, err := os.ReadFile(file)
	require.NoError(t, err)
	lock, err := tasks.Lock(file)
	require.NoError(t, err)
	defer lock.Unlock()
	c, err := control.Open(control.Options{File: file, Run: control.RunOptions{NoSandbox: true}})
	require.NoError(t, err)
	defer c.Close()
	err = c.Start(bg, control.StartOptions{})
	require.ErrorIs(t, err, control.ErrRunning)
	_, err = c.AddTask([]byte(`{"title": "x"}`))
	require.ErrorIs(t, err, control.ErrRunning)
	_, err = c.Reset()
	require.ErrorIs(t, err, control.ErrRunning)
	after, _ := os.ReadFile(file)
	require.Equal(t, before, after)
	var le *tasks.LockedError
	require.True(t, errors.As(err, &le), "the error names the lock holder: %v", err)
}

// AddTask validates as Load does and writes nothing on error; Reset sends
// failed tasks back to pending; subscribers are told to re-read.
func TestAddTaskAndReset(t *testing.T) {
	file := controltest.NewPlan(t, `{"tasks": [{"id": 1, "title": "one", "status": "failed"}, {"id": 2, "title": "two", "dependencies": [1], "status": "blocked"}]}`)
	c, err := control.Open(control.Options{File: file})
	require.NoError(t, err)
	defer c.Close()
	sub := c.Subscribe(64)
	defer sub.Close()
	before, _ := os.ReadFile(file)
	_, err = c.AddTask([]byte(`{"title": "bad", "dependencies": [99]}`))
	var ve *tasks.ValidationError
	require.ErrorAs(t, err, &ve)
	after, _ := os.ReadFile(file)
	require.Equal(t, before, after)

	id, err := c.AddTask([]byte(`{"title": "three", "dependencies": [2]}`))
	require.NoError(t, err)
	require.Equal(t, "3", id)
	waitFor(t, sub, 10*time.Second, "task 3", func(e control.Event) bool { return e.Kind == control.EventTask && e.Unit == "3" })

	done, err := c.Reset()
	require.NoError(t, err)
	require.Equal(t, []string{"1", "2"}, done)
	ts, err := c.Tasks(bg)
	require.NoError(t, err)
	require.Len(t, ts, 3)
	for _, ti := range ts {
		require.Equal(t, tasks.StatusPending, ti.Status, ti.ID)
	}
	_, err = c.Reset("1")
	require.ErrorIs(t, err, tasks.ErrNotResettable)
}

func kinds(es []control.Event) []string {
	var out []string
	for _, e := range es {
		s := string(e.Kind) + ":" + e.Unit
		if e.Task != nil {
			s += ":" + e.Task.Status
		}
		out = append(out, s)
	}
	return out
}
