package verifier

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine Run or Verify
// started is still running when they end. Run as
// `verifier.test gocacheprog LOWER UPPER`, the test binary is the sandbox's
// GOCACHEPROG instead, as the statgraph binary is in a real run.
func TestMain(m *testing.M) {
	if len(os.Args) == 4 && os.Args[1] == "gocacheprog" {
		if err := ServeGoCache(os.Stdin, os.Stdout, os.Args[2], os.Args[3]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		if probeDir != "" {
			os.RemoveAll(probeDir)
		}
		os.Exit(code)
	}))
}
