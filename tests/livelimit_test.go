package tests

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hangingStandIn is the body of a stand-in agent CLI named NAME that
// prints what the real CLI printed when every request to its model server
// got HTTP 429 (the file OUT, a copy of agents/testdata/limits/NAME.txt)
// and then, as the real gemini-cli and opencode do, never exits (it
// writes its pid to .rec/NAME/pid in the workspace first).
const hangingStandIn = `#!/bin/sh
d=.rec/NAME
mkdir -p "$d"
cat > /dev/null
echo $$ > "$d/pid"
cat 'OUT'
exec sleep 600
`

// TestLiveLimitStopsCLIAndParks: the real gemini-cli and opencode do not
// exit on a 429 (they retry on); stand-ins printing their recorded
// output and then hanging are stopped as soon as the limit line is out,
// and their tasks parked until the reset the server's message gives (2
// hours from now), with no retry used, instead of waiting for the agent's
// 30-minute timeout. The run, which would wait for the reset, is then
// killed. (Before, both stand-ins ran on: nothing parked within the
// deadline.)
func TestLiveLimitStopsCLIAndParks(t *testing.T) {
	t.Parallel()
	presets := []string{"gemini", "opencode"}
	dir, stubs := limitStandIns(t, presets, hangingStandIn)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	cmd, stdout, stderr := command(ctx, dir, "run", noSandbox, "-j", "2", "--keep-workspaces", "tasks.json")
	cmd.Env = append(cmd.Env, "PATH="+stubs+string(os.PathListSeparator)+os.Getenv("PATH"))
	require.NoError(t, cmd.Start())
	defer func() {
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
	}()
	rows := map[string]statusRow{}
	for deadline := time.Now().Add(2 * time.Minute); len(rows) < len(presets); time.Sleep(200 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "not every task parked within 2 minutes: %v\nstdout:\n%s\nstderr:\n%s", rows, stdout, stderr)
		for _, name := range presets {
			if row, ok := statusRowOf(t, dir, name); ok && row.Status == "parked" {
				rows[name] = row
			}
		}
	}
	plan := planOf(t, dir, "tasks.json", "")
	for _, name := range presets {
		t.Run(name, func(t *testing.T) {
			row := rows[name]
			require.NotNil(t, row.ParkedUntil)
			assert.WithinDuration(t, start.Add(2*time.Hour), *row.ParkedUntil, 3*time.Minute, "the reset in the server's message")
			assert.Contains(t, row.Reason, "does not exit on its provider's limit")
			assert.Equal(t, 0, row.Attempts, "the limit used no attempt")
			pid := strings.TrimSpace(readFile(t, filepath.Join(plan.WorkDir(), name, ".rec", name, "pid")))
			_, err := os.Stat("/proc/" + pid)
			assert.True(t, os.IsNotExist(err), "the stand-in (pid %s) was stopped", pid)
		})
	}
}
