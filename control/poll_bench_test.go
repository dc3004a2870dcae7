package control_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/tasks"
)

// BenchmarkPoll measures one poll of a plan of 200, 1,000 and 10,000
// tasks, 4 in progress and 100 finished with a run in the store, after a
// first poll, while nothing changes: "poll" is what the watcher does every
// Poll interval (control.Poll: Tasks and the comparison with the last
// poll), "tasks" is Tasks alone, "poll-written" a poll while the tasks
// file's modification time is too recent to trust (within 2 s of a write:
// the file is read and hashed, not parsed), and "floor" is loading the
// same tasks file once, which a poll did every time before it kept the
// last load. It reports the threads read from the run store per poll.
func BenchmarkPoll(b *testing.B) {
	for _, n := range []int{200, 1000, 10000} {
		running := []int{1, 2, 3, 4}
		var done []int
		for i := 5; i < 105; i++ {
			done = append(done, i)
		}
		file := pollPlan(b, n, running, done)
		b.Run(fmt.Sprintf("tasks=%d/floor", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := tasks.Load(file, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("tasks=%d/tasks", n), func(b *testing.B) {
			c, cs := openPolled(b, file, append(running, done...)...)
			if _, err := c.Tasks(bg); err != nil {
				b.Fatal(err)
			}
			cs.threads()
			reads := 0
			for b.Loop() {
				if _, err := c.Tasks(bg); err != nil {
					b.Fatal(err)
				}
				reads += len(cs.threads())
			}
			b.ReportMetric(float64(reads)/float64(b.N), "threads-read/op")
		})
		b.Run(fmt.Sprintf("tasks=%d/poll", n), func(b *testing.B) {
			c, cs := openPolled(b, file, append(running, done...)...)
			control.Poll(c)
			cs.threads()
			reads := 0
			for b.Loop() {
				control.Poll(c)
				reads += len(cs.threads())
			}
			b.ReportMetric(float64(reads)/float64(b.N), "threads-read/op")
		})
		b.Run(fmt.Sprintf("tasks=%d/poll-written", n), func(b *testing.B) {
			// A modification time ahead of the clock is never trusted.
			soon := time.Now().Add(time.Hour)
			if err := os.Chtimes(file, soon, soon); err != nil {
				b.Fatal(err)
			}
			c, _ := openPolled(b, file, append(running, done...)...)
			control.Poll(c)
			for b.Loop() {
				control.Poll(c)
			}
		})
	}
}
