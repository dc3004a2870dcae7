package dispatch

import (
	"fmt"

	"github.com/statgraph/statgraph/tasks"
)

// refresh.go keeps a running dispatch in step with edits the user makes to
// the tasks file meanwhile (see File.Save).

// refreshUnits returns the file's units after Save took in the user's
// version, updating status and results for every unit this run has not
// started: a task the user added gets its entry (and runs when its
// dependencies allow), one whose status the user changed gets that status.
// Units already started keep the dispatcher's view until they finish.
func (d *Dispatcher) refreshUnits(old []tasks.Unit, status map[string]string, results map[string]*UnitResult, started map[string]bool) []tasks.Unit {
	units := d.File.Units()
	have := make(map[string]bool, len(units))
	for _, u := range units {
		have[u.ID] = true
		if started[u.ID] {
			continue
		}
		t, _ := d.File.Task(u.ID)
		status[u.ID] = t.Status
		if r := results[u.ID]; r != nil {
			r.Title, r.Status, r.Reason, r.Attempts = t.Title, t.Status, t.StatusReason, t.RetryCount
			continue
		}
		results[u.ID] = &UnitResult{ID: u.ID, Title: t.Title, Status: t.Status, Reason: t.StatusReason, Attempts: t.RetryCount}
	}
	// A unit the user removed while it ran is still reported at the end.
	for _, u := range old {
		if started[u.ID] && !have[u.ID] {
			units = append(units, u)
		}
	}
	return units
}

// logNotes writes what Save had to say about the user's edits to Log.
func (d *Dispatcher) logNotes() {
	for _, n := range d.File.TakeNotes() {
		if d.Log != nil {
			fmt.Fprintf(d.Log, "statgraph: %s\n", n)
		}
	}
}
