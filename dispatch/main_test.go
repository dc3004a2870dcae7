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
// childHome is set in the environment of this test binary's children.
const childHome = "STATGRAPH_TEST_CHILD_HOME"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "sandbox-init" {
		os.Exit(proc.RunInit(os.Args[2:], os.Stderr))
	}
	// Dispatcher runs keep their state under STATGRAPH_HOME: never the real home.
	// A child the tests start from this binary (and kill) shares its
	// parent's home rather than leaving one of its own behind.
	if os.Getenv(childHome) != "" {
		os.Exit(m.Run())
	}
	home, err := os.MkdirTemp("", "statgraph-home-")
	if err != nil {
		panic(err)
	}
	os.Setenv("STATGRAPH_HOME", home)
	os.Setenv(childHome, "1")
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}
