package control_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/control"
)

// waitFor reads sub until an event satisfies ok, failing after d; it
// returns the events read, that one last.
func waitFor(t *testing.T, sub *control.Subscription, d time.Duration, what string, ok func(control.Event) bool) []control.Event {
	t.Helper()
	var seen []control.Event
	timeout := time.After(d)
	for {
		select {
		case e, open := <-sub.C:
			require.True(t, open, "subscription closed while waiting for %s", what)
			seen = append(seen, e)
			if ok(e) {
				return seen
			}
		case <-timeout:
			var kinds []string
			for _, e := range seen {
				s := string(e.Kind) + ":" + e.Unit
				if e.Task != nil {
					s += ":" + e.Task.Status + "/" + e.Task.Phase
				}
				kinds = append(kinds, s)
			}
			t.Fatalf("no event for %s within %s; saw %s", what, d, strings.Join(kinds, " "))
		}
	}
}

func taskEvent(id, status string) func(control.Event) bool {
	return func(e control.Event) bool {
		return e.Kind == control.EventTask && e.Unit == id && e.Task.Status == status
	}
}

var bg = context.Background()
