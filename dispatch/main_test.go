//go:build unix

package dispatch

import (
	"os"
	"testing"

	"github.com/statgraph/statgraph/internal/proc"
)

// TestMain points STATGRAPH_HOME at a temporary directory, and doubles as
// the sandbox's helper: started as `dispatch.test sandbox-init
// ARGS`, it runs proc.RunInit (Dispatcher.SandboxHelper), as
// statgraph's own hidden command does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "sandbox-init" {
		os.Exit(proc.RunInit(os.Args[2:], os.Stderr))
	}
	// Dispatcher runs keep their state under STATGRAPH_HOME: never the real home.
	home, err := os.MkdirTemp("", "statgraph-home-")
	if err != nil {
		panic(err)
	}
	os.Setenv("STATGRAPH_HOME", home)
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}
