//go:build scale

package tests

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// A coordinator enqueues unit 1 with no task timeout and is kill -9'd
// before any worker takes it; a new coordinator with --task-timeout 2s
// takes the plan over, and the worker that then runs the unit applies the
// new run's limits: the 20 s executor fails at the 2 s deadline, and the
// worker says so in its log. (Before, the unit kept the first run's
// limits: no deadline, and it ended done.)
func TestQueueNewCoordinatorsLimitsApplyToPendingUnits(t *testing.T) {
	s := newQueueSetup(t, []effectTask{{id: 1, passOn: 1, execSleep: "20"}})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	first, _ := s.coordinator(ctx, t)
	conn, err := pgx.Connect(ctx, s.db)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		var n int
		if conn.QueryRow(ctx, `SELECT count(job_id) FROM statgraph_units`).Scan(&n) == nil && n == 1 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the first coordinator did not enqueue unit 1")
	}
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	first.Wait()

	cmd, stdout, stderr := command(ctx, s.repo, "run", "--queue", s.db, "--remote", s.remote, "--plain", noSandbox, "--task-timeout", "2s", "tasks.json")
	require.NoError(t, cmd.Start())
	w := startWorker(t, s, "60s", 1)
	r := wait(t, cmd.Wait(), stdout, stderr)
	require.Equal(t, 1, r.code, "the unit fails at its deadline; stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	got := readTasks(t, filepath.Join(s.repo, "tasks.json"))["1"]
	require.Equal(t, "failed", got.Status, "%+v", got)
	require.Contains(t, got.StatusReason, "deadline of 2s passed")
	var units int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM statgraph_units`).Scan(&units))
	require.Equal(t, 1, units, "the second coordinator waited for the unit the first enqueued, enqueuing none")
	data, err := os.ReadFile(w.stderr)
	require.NoError(t, err)
	require.True(t, strings.Contains(string(data), "task timeout 2s"), "the worker's log:\n%s", data)
}
