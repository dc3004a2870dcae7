package control_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/control/controltest"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/tasks"
)

// A run that Control did not start (as statgraph run in a terminal: its
// own Dispatcher, store handle and lock) is seen by polling the tasks
// file, the results journal and the run store.
func TestWatchesRunStartedElsewhere(t *testing.T) {
	file := controltest.NewPlan(t, `{"tasks": [
  {"id": 1, "title": "slow", "executor": {"command": ["sh", "-c", "sleep 1; echo one > one.txt"]}, "test_cmd": "test -f one.txt"},
  {"id": 2, "title": "next", "dependencies": [1], "executor": {"command": ["sh", "-c", "echo two > two.txt"]}, "test_cmd": "test -f two.txt"}
]}
`)
	c, err := control.Open(control.Options{File: file, Poll: 50 * time.Millisecond})
	require.NoError(t, err)
	defer c.Close()
	sub := c.Subscribe(1024)
	defer sub.Close()
	waitFor(t, sub, 10*time.Second, "the first comparison", taskEvent("2", tasks.StatusPending))

	// The terminal's run.
	lock, err := tasks.Lock(file)
	require.NoError(t, err)
	f, err := tasks.Load(file, "")
	require.NoError(t, err)
	require.NoError(t, c.Plan().Ensure())
	st, err := sqlite.Open(bg, c.Plan().Store())
	require.NoError(t, err)
	defer st.Close()
	done := make(chan error, 1)
	go func() {
		_, err := (&dispatch.Dispatcher{File: f, Repo: filepath.Dir(file), Checkpointer: st, Jobs: 1}).Run(bg)
		lock.Unlock()
		done <- err
	}()
	seen := waitFor(t, sub, 60*time.Second, "task 1 running", func(e control.Event) bool {
		return e.Kind == control.EventTask && e.Unit == "1" && e.Task.Node != ""
	})
	require.NotEmpty(t, seen)
	waitFor(t, sub, 60*time.Second, "task 1 done", taskEvent("1", tasks.StatusDone))
	waitFor(t, sub, 60*time.Second, "task 2 done", taskEvent("2", tasks.StatusDone))
	require.NoError(t, <-done)
	require.Error(t, c.Stop(false), "Stop does not reach a run of another process")
}

// A subscriber that does not read never blocks the changes (AddTask
// returns each time); it loses events and is told to resync once it has
// room again.
func TestSlowSubscriberDropsAndResyncs(t *testing.T) {
	file := controltest.NewPlan(t, `{"tasks": [{"id": 1, "title": "one"}]}`)
	c, err := control.Open(control.Options{File: file, Poll: time.Hour})
	require.NoError(t, err)
	defer c.Close()
	slow := c.Subscribe(16)
	defer slow.Close()
	for i := range 30 {
		start := time.Now()
		_, err := c.AddTask(fmt.Appendf(nil, `{"title": "t%d"}`, i))
		require.NoError(t, err)
		require.Less(t, time.Since(start), 5*time.Second)
	}
	require.Eventually(t, func() bool { return len(slow.C) == cap(slow.C) }, 10*time.Second, time.Millisecond,
		"the watcher fills the subscriber's buffer")
	require.Len(t, slow.C, 16, "the buffer is full, the rest was dropped")
	for range 16 {
		<-slow.C
	}
	_, err = c.AddTask([]byte(`{"title": "last"}`))
	require.NoError(t, err)
	select {
	case e := <-slow.C:
		require.Equal(t, control.EventResync, e.Kind, "the first event after the drop says to re-read")
	case <-time.After(5 * time.Second):
		t.Fatal("no event after the buffer drained")
	}
	ts, err := c.Tasks(bg)
	require.NoError(t, err)
	require.Len(t, ts, 32)
}
