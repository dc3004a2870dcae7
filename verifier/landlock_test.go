package verifier

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statgraph/statgraph/internal/asuser"
	"github.com/statgraph/statgraph/internal/proc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSandboxLandlock attacks what bwrap's mounts leave open and Landlock
// closes, in a real sandbox run through Helper: the sandbox's own root and
// /dev are tmpfs the command may write, and with "network": true a host
// abstract unix socket (X11, D-Bus) is reachable. Each attack works in the
// same sandbox without the Landlock layer (noLandlock), the control; what
// a check needs (the workspace, /tmp, $HOME, reading /etc) works in both.
// As root it runs again as uid 65534.
func TestSandboxLandlock(t *testing.T) {
	requireSandbox(t)
	if proc.LandlockABI() < 6 {
		t.Skipf("needs Landlock ABI 6 or later; this kernel has %d", proc.LandlockABI())
	}
	if os.Geteuid() == 0 && !asuser.Inner() {
		defer asuser.RunTests(t, "^TestSandboxLandlock$", []string{"TestSandboxLandlock"}, "TMPDIR="+os.TempDir())
	}
	self, err := filepath.Abs(os.Args[0])
	require.NoError(t, err)
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	abstract := serveLine(t, "unix", fmt.Sprintf("@statgraph-landlock-%d", os.Getpid()))
	rows := []struct {
		name, probe string
		network     bool
		held        bool // whether Landlock stops it
	}{
		{"write the sandbox's root", "write:/statgraph-landlock", false, true},
		{"make a file in /dev", "write:/dev/statgraph-landlock", false, true},
		{"host abstract socket, network on", "unix:" + abstract, true, true},
		{"write the workspace", "write:WS/f", false, false},
		{"write /tmp", "write:/tmp/f", false, false},
		{"write $HOME", "write:" + filepath.Join(home, "f"), false, false},
		{"read /etc/passwd", "read:/etc/passwd", false, false},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			for _, landlock := range []bool{true, false} {
				ws := t.TempDir()
				res, err := Run(context.Background(), Command{
					Argv: []string{self, "-test.run", "^TestSandboxProbeHelper$"}, Dir: ws, Timeout: time.Minute,
					Env: []string{"SANDBOX_PROBE=" + strings.Replace(r.probe, "WS", ws, 1)},
					Sandbox: &Sandbox{Workspace: ws, ReadOnly: []string{self}, Network: r.network,
						Helper: []string{self, "sandbox-init"}, noLandlock: !landlock},
				})
				require.NoError(t, err)
				if r.held && landlock {
					assert.Contains(t, res.Output, "NO ", "Landlock stops it: %s", res.Output)
				} else {
					assert.Contains(t, res.Output, "OK ", "it works (landlock %v): %s", landlock, res.Output)
				}
			}
		})
	}
}
