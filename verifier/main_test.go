package verifier

import (
	"fmt"
	"os"
	"testing"

	"github.com/statgraph/statgraph/internal/gocacheprog"
	"github.com/statgraph/statgraph/internal/proc"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine Run or Verify
// started is still running when they end. Run as
// `verifier.test gocacheprog UPPER LOWER...`, the test binary is the sandbox's
// GOCACHEPROG instead, as the statgraph binary is in a real run; run as
// `verifier.test sandbox-init ARGS`, it is the sandbox's helper (Landlock, bridge)
// (Sandbox.Helper), as `statgraph sandbox-init` is.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "sandbox-init" {
		os.Exit(proc.RunInit(os.Args[2:], os.Stderr))
	}
	if len(os.Args) >= 4 && os.Args[1] == "gocacheprog" {
		if err := gocacheprog.Serve(os.Stdin, os.Stdout, os.Args[2], os.Args[3:]...); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// The allowlisting proxies serve for the life of the process, as in
	// statgraph (proc.ProxySocket).
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("net/http.(*Server).Serve"),
		goleak.IgnoreAnyFunction("net/http.(*conn).serve"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.Cleanup(func(code int) {
			if probeDir != "" {
				os.RemoveAll(probeDir)
			}
			os.Exit(code)
		}))
}
