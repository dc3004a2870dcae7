//go:build scale

package tests

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A worker sent SIGTERM while unit 1's executor runs drains: it lets the
// executor finish, checkpoints that step, releases the unit and exits 0.
// A second worker, started afterwards, continues unit 1 from the
// checkpoint (its tests, not its executor again) and runs unit 2, which
// depends on it: the plan ends as without the drain, every step run once.
// (Before drains, SIGTERM cancelled the step: exit 130 and the executor
// ran twice.)
func TestQueueWorkerDrainsOnSIGTERM(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	ts := []effectTask{{id: 1, passOn: 1, execGate: gate}, {id: 2, passOn: 1, deps: []int{1}}}
	s := newQueueSetup(t, ts)
	a := startWorker(t, s, "60s", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, waitRun := s.coordinator(ctx, t)

	waitForLine(t, s.log, "exec_1_1", time.Minute)
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGTERM))
	waitForText(t, a.stderr, "SIGTERM: draining", time.Minute)
	require.NoError(t, os.WriteFile(gate, nil, 0o644)) // the executor's step goes on and ends

	exited := make(chan error, 1)
	go func() { exited <- a.cmd.Wait() }()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			data, _ := os.ReadFile(a.stderr)
			t.Fatalf("the draining worker exited %d; want 0:\n%s", ee.ExitCode(), data)
		}
		require.NoError(t, err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the draining worker did not exit within 2 minutes")
	}
	data, err := os.ReadFile(a.stderr)
	require.NoError(t, err)
	require.Contains(t, string(data), "unit 1 (", "the worker's log")
	require.Contains(t, string(data), "drained: its current step finished and is checkpointed", "the worker's log")
	require.NotContains(t, effectLines(t, s.log), "verify_1_1", "the drained worker ran unit 1's next step")

	startWorker(t, s, "60s", 1)
	r := waitRun()
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	s.checkFinal(t, 2)
	counts := countLines(effectLines(t, s.log))
	for _, step := range []string{"exec_1_1", "verify_1_1", "exec_2_1", "verify_2_1"} {
		require.Equal(t, 1, counts[step], "%s; log: %v", step, counts)
	}
}

// waitForText waits until the file at path contains text.
func waitForText(t *testing.T, path, text string, timeout time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if data, _ := os.ReadFile(path); strings.Contains(string(data), text) {
			return
		}
	}
	data, _ := os.ReadFile(path)
	t.Fatalf("%q did not appear in %s within %s:\n%s", text, path, timeout, data)
}
