//go:build linux

package agents

import (
	"os"
	"testing"

	"github.com/statgraph/statgraph/internal/asuser"
)

// asNobody runs the test named name again as the unprivileged user nobody
// (65534) when the test process is root, so that a test of what holds
// for root also shows it holds for an ordinary user (see asuser). It does
// nothing in that inner run or when not root.
func asNobody(t *testing.T, name string) {
	t.Helper()
	if asuser.Inner() || os.Geteuid() != 0 {
		return
	}
	asuser.RunTests(t, "^"+name+"$", []string{name})
}
