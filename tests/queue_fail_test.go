//go:build scale

package tests

// Scale-out under failure: workers kill -9'd mid-unit and mid-publish, a
// worker stalled past its lease, the coordinator kill -9'd and restarted.
// The lease is short (15 s), so River's rescuer (every 30 s) takes a dead
// worker's unit over within about 50 s.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

const failLease = "15s"

// slowPush installs a pre-receive hook in the remote: the first push of
// unit id's branch (not its work in progress, statgraph-wip/...) logs "push <id>" and then waits until the file gate
// exists (at most 120 s); later pushes pass at once. A remote with a hook
// is pushed to by git (workers push in-process only to a remote without
// one), so these tests cut off git's pushes, not the in-process ones
// (TestQueueWorkerKilledMidInProcessPublish does).
func slowPush(t *testing.T, s queueSetup, id, gate string) {
	t.Helper()
	marker := filepath.Join(t.TempDir(), "pushed-"+id)
	hook := fmt.Sprintf(`#!/bin/sh
while read old new ref; do
  case "$ref" in
  refs/heads/statgraph/*/%[1]s)
    if [ ! -e '%[2]s' ]; then
      : > '%[2]s'
      echo "push %[1]s" >> '%[3]s'
      i=0; while [ ! -e '%[4]s' ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done
    fi;;
  esac
done
exit 0
`, id, marker, s.log, gate)
	p := filepath.Join(s.remote, "hooks", "pre-receive")
	require.NoError(t, os.WriteFile(p, []byte(hook), 0o755))
}

func workerByID(t *testing.T, ws []*worker, id string) *worker {
	t.Helper()
	for _, w := range ws {
		if w.id == id {
			return w
		}
	}
	t.Fatalf("no worker has id %s", id)
	return nil
}

// One worker is kill -9'd while unit 3's executor runs, one while unit
// 4's tests run, and one while it pushes unit 5's branch. River's rescuer
// gives the units to other workers (each with its own state root, as on
// another machine): the plan ends as without the kills, no unit is
// published twice, and the only steps run twice are the ones in flight:
// unit 3's executor and unit 4's tests (unit 4 continues from its
// checkpoint on the commit its executor pushed); unit 5, cut off after its
// branch went out, is recorded without running again.
func TestQueueWorkersKilledMidUnitAndMidPublish(t *testing.T) {
	const n = 8
	ts := dagTasks(n, "0.05")
	ts[2].execSleep = "4" // unit 3
	ts[3].testSleep = "4" // unit 4
	ts[3].logBase = true
	s := newQueueSetup(t, ts)
	gate := filepath.Join(t.TempDir(), "gate")
	slowPush(t, s, "5", gate)
	ws := []*worker{startWorker(t, s, failLease, 1), startWorker(t, s, failLease, 1), startWorker(t, s, failLease, 1)}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, waitRun := s.coordinator(ctx, t)

	kill := func(line, unit string) {
		waitForLine(t, s.log, line, time.Minute)
		w := workerByID(t, ws, unitWorker(t, s.db, unit))
		require.NoError(t, w.cmd.Process.Signal(syscall.SIGKILL))
		ws = append(ws, startWorker(t, s, failLease, 1))
	}
	kill("exec_3_1", "3")
	kill("verify_4_1", "4")
	kill("push_5", "5")
	require.NoError(t, os.WriteFile(gate, nil, 0o644)) // the push itself goes on, as git's would

	r := waitRun()
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	s.checkFinal(t, n)
	counts := countLines(effectLines(t, s.log))
	for i := 1; i <= n; i++ {
		execs, tests := 1, 1
		switch i {
		case 3:
			execs = 2
		case 4:
			tests = 2
		}
		require.Equal(t, execs, counts[fmt.Sprintf("exec_%d_1", i)], "unit %d's executor; log: %v", i, counts)
		require.Equal(t, tests, counts[fmt.Sprintf("verify_%d_1", i)], "unit %d's tests; log: %v", i, counts)
		require.Zero(t, counts[fmt.Sprintf("exec_%d_2", i)], "unit %d ran a second attempt; log: %v", i, counts)
	}
	require.Equal(t, 1, counts["push_5"])
	// Unit 4, taken over, continued on its executor's commit, but its
	// workspace's base (where a reset goes, what the review's diff starts
	// from) is still its dependency's branch, as in the workspace it began
	// in; it was the executor's commit.
	plan := planOf(t, s.repo, "tasks.json", "")
	dep := gittest.Git(t, s.remote, "rev-parse", plan.Branch("2"))
	var bases []string
	for _, l := range effectLines(t, s.log) {
		if b, ok := strings.CutPrefix(l, "base_4_"); ok {
			bases = append(bases, b)
		}
	}
	require.Equal(t, []string{dep, dep}, bases, "unit 4's base before and after the takeover")
}

// A worker is kill -9'd in the middle of its in-process publish (a bare
// remote without hooks, pushed to by workspace.PushLocal): for unit 5 with
// the new values written in the ref locks and nothing renamed yet, for
// unit 6 with its branch renamed into place and its work in progress not
// yet deleted. The kill comes from the one test-only switch
// STATGRAPH_TEST_PUSH_KILL (agents/workspace/pushpoint_testhooks.go, in
// the binary built with -tags statgraph_testhooks), given to the
// first workers only: the first worker to reach the point kills itself
// there, once. A worker taking each unit over publishes the result the
// dead one staged, through the locks it left (the next push removes them;
// they blocked every push of those refs before), without running the
// unit again: same final state, each step run once, no lock left.
func TestQueueWorkerKilledMidInProcessPublish(t *testing.T) {
	const n = 8
	s := newQueueSetup(t, dagTasks(n, "0.05"))
	marks := t.TempDir()
	m5, m6 := filepath.Join(marks, "5"), filepath.Join(marks, "6")
	kill := "STATGRAPH_TEST_PUSH_KILL=written refs/heads/statgraph/*/5 " + m5 + ";renamed-1 refs/heads/statgraph/*/6 " + m6
	ws := []*worker{startWorkerEnv(t, s, failLease, 1, kill), startWorkerEnv(t, s, failLease, 1, kill), startWorkerEnv(t, s, failLease, 1, kill)}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, waitRun := s.coordinator(ctx, t)

	// A worker in place of each one killed, armed like the others: the
	// worker replacing unit 5's may be the one to take unit 6 (a marker
	// once made disarms its kill point for every process).
	for _, m := range []string{m5, m6} {
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(m); err == nil {
				break
			}
			require.True(t, time.Now().Before(deadline), "no worker reached the kill point of %s", m)
		}
		ws = append(ws, startWorkerEnv(t, s, failLease, 1, kill))
	}
	r := waitRun()
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	s.checkFinal(t, n)
	counts := countLines(effectLines(t, s.log))
	for i := 1; i <= n; i++ {
		require.Equal(t, 1, counts[fmt.Sprintf("exec_%d_1", i)], "unit %d's executor; log: %v", i, counts)
		require.Equal(t, 1, counts[fmt.Sprintf("verify_%d_1", i)], "unit %d's tests; log: %v", i, counts)
	}
	var logs strings.Builder
	killed := 0
	for _, w := range ws {
		data, err := os.ReadFile(w.stderr)
		require.NoError(t, err)
		logs.Write(data)
		// A worker that died is a zombie until the test's cleanup reaps it.
		if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", w.cmd.Process.Pid)); err == nil && strings.Contains(string(st), ") Z ") {
			killed++
		}
	}
	require.Equal(t, 2, killed, "workers that killed themselves mid-publish")
	for _, u := range []string{"5", "6"} {
		require.Regexp(t, `unit `+u+` \([^)]*\): done \(published what an earlier attempt staged\)`, logs.String(),
			"unit %s: published by the worker taking over, from the staged result", u)
	}
	var locks []string
	filepath.WalkDir(filepath.Join(s.remote, "refs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".lock") {
			locks = append(locks, p)
		}
		return nil
	})
	require.Empty(t, locks, "ref locks left on the remote")
	require.NoFileExists(t, filepath.Join(s.remote, "packed-refs.lock"))
	journals, _ := filepath.Glob(filepath.Join(s.remote, "statgraph-locks", "push-*"))
	require.Empty(t, journals, "journals of killed pushes left on the remote")
}

// The coordinator is kill -9'd while units run and started again: it
// waits for the units it had enqueued (enqueuing none twice) and ends
// with every unit done, each step run once.
func TestQueueCoordinatorKilledAndRestarted(t *testing.T) {
	const n = 10
	s := newQueueSetup(t, dagTasks(n, "0.3"))
	for range 2 {
		startWorker(t, s, "60s", 2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	first, _ := s.coordinator(ctx, t)
	waitForLine(t, s.log, "exec_4_1", time.Minute)
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	first.Wait() // killed, as asked
	_, waitRun := s.coordinator(ctx, t)
	r := waitRun()
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	s.checkFinal(t, n)
	counts := countLines(effectLines(t, s.log))
	for i := 1; i <= n; i++ {
		require.Equal(t, 1, counts[fmt.Sprintf("exec_%d_1", i)], "unit %d's executor; log: %v", i, counts)
	}
}

// A worker stalls (SIGSTOP) while it publishes unit 2, past its lease,
// holding the unit's row. Postgres ends its session, River's rescuer gives
// the unit to another worker, which publishes the result the stalled one
// staged (the remote has its commit as work in progress); when the
// stalled worker goes on, its late push and result are refused.
func TestQueueStalledWorkerIsRefused(t *testing.T) {
	const n = 2
	s := newQueueSetup(t, dagTasks(n, "0.05"))
	gate := filepath.Join(t.TempDir(), "gate")
	slowPush(t, s, "2", gate)
	ws := []*worker{startWorker(t, s, failLease, 1), startWorker(t, s, failLease, 1)}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, waitRun := s.coordinator(ctx, t)

	waitForLine(t, s.log, "push_2", time.Minute)
	stalled := workerByID(t, ws, unitWorker(t, s.db, "2"))
	require.NoError(t, stalled.cmd.Process.Signal(syscall.SIGSTOP))
	r := waitRun() // the rescued run finishes the plan while the stalled worker is stopped
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	require.NotEqual(t, stalled.id, unitWorker(t, s.db, "2"))

	plan := planOf(t, s.repo, "tasks.json", "")
	branch := plan.Branch("2")
	before := gittest.Git(t, s.remote, "rev-parse", branch)
	// Let the stalled push go on, then the worker.
	require.NoError(t, os.WriteFile(gate, nil, 0o644))
	require.NoError(t, stalled.cmd.Process.Signal(syscall.SIGCONT))
	conn, err := pgx.Connect(context.Background(), s.db)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var refused int
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		require.NoError(t, conn.QueryRow(context.Background(), `SELECT count(*) FROM statgraph_refusals WHERE worker::text = $1`, stalled.id).Scan(&refused))
		if refused > 0 {
			break
		}
	}
	require.Equal(t, 1, refused, "the stalled worker's late result is refused")
	require.Equal(t, before, gittest.Git(t, s.remote, "rev-parse", branch), "the rescued run's branch stands")
	var winner string
	require.NoError(t, conn.QueryRow(context.Background(), `SELECT result->>'worker' FROM statgraph_units WHERE unit = '2'`).Scan(&winner))
	require.NotEqual(t, stalled.id, winner)
	s.checkFinal(t, n)
	counts := countLines(effectLines(t, s.log))
	// The stalled worker had staged its result; the remote had the commit
	// as unit 2's work in progress, so the worker taking over published it
	// without running the unit again.
	require.Equal(t, 1, counts["exec_2_1"], "log: %v", counts)
	require.Equal(t, 1, counts["exec_1_1"])
}
