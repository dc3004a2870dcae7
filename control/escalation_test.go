package control_test

import (
	"github.com/statgraph/statgraph/statgraph/gate"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
	"github.com/statgraph/statgraph/tasks"
)

// A run stopped while task 1's escalation waits for an answer leaves the
// task interrupted at its question. The next run continues the
// orchestrator with no answer, which is none of the choices: the
// orchestrator asks the question again, as the library's gates do, rather
// than failing the task for good, and the answer given then takes effect.
func TestStoppedQuestionIsAskedAgain(t *testing.T) {
	file := controltest.NewPlan(t, controltest.AskPlan)
	m := controltest.NewModel(t)
	c, err := control.Open(control.Options{File: file, Run: control.RunOptions{Model: m.Config(), Jobs: 1}, Poll: 50 * time.Millisecond})
	require.NoError(t, err)
	defer c.Close()
	sub := c.Subscribe(1024)
	defer sub.Close()
	question := func(e control.Event) bool { return e.Kind == control.EventQuestion && e.Unit == "1" }

	require.NoError(t, c.Start(bg, control.StartOptions{}))
	waitFor(t, sub, 90*time.Second, "task 1's question", question)
	require.NoError(t, c.Stop(true))
	ts, err := c.Tasks(bg)
	require.NoError(t, err)
	require.Equal(t, tasks.StatusInterrupted, ts[0].Status)

	require.NoError(t, c.Start(bg, control.StartOptions{}))
	seen := waitFor(t, sub, 90*time.Second, "task 1's question asked again", func(e control.Event) bool {
		return question(e) || taskEvent("1", tasks.StatusFailed)(e)
	})
	last := seen[len(seen)-1]
	require.Equal(t, control.EventQuestion, last.Kind, "task 1 failed instead of asking again: %+v", last.Task)
	require.Equal(t, 1, last.Question.Attempts)
	require.Empty(t, last.Question.Invalid, "no answer was given, so none was refused")
	require.NoError(t, c.Answer("1", gate.AnswerRetry))

	waitFor(t, sub, 90*time.Second, "task 2 done", taskEvent("2", tasks.StatusDone))
	require.NoError(t, c.Wait(bg))
	info := c.Run()
	require.Empty(t, info.Error)
	for _, u := range info.Units {
		require.Equal(t, tasks.StatusDone, u.Status, "%+v", u)
	}
	h, err := c.History(bg, "1", false)
	require.NoError(t, err)
	require.Len(t, h.Attempts, 2, "the answer retry ran the executor again")
	require.True(t, h.Attempts[1].Passed)
}
