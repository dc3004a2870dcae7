//go:build scale

package tests

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

// A worker is kill -9'd after unit 1's run ended and its branch was
// published into the worker's clone, before it staged or recorded the
// result (the kill point STATGRAPH_TEST_LAND_KILL "published", in the
// binary built with -tags statgraph_testhooks). A worker with its own
// state root (another machine) takes the unit over once River rescues it:
// it takes the unit up with the run's outcome from the work in progress
// the dead one pushed, without running the executor or the tests again;
// the branch on the remote is that commit, and unit 2, which depends on
// unit 1, runs on it. (Before, the second worker ran unit 1 again: its
// executor twice.)
func TestQueueWorkerKilledAfterPublishTakenUp(t *testing.T) {
	s := newQueueSetup(t, []effectTask{{id: 1, passOn: 1}, {id: 2, passOn: 1, deps: []int{1}}})
	marker := filepath.Join(t.TempDir(), "killed")
	a := startWorkerEnv(t, s, failLease, 1, "STATGRAPH_TEST_LAND_KILL=published 1 "+marker)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, waitRun := s.coordinator(ctx, t)

	for deadline := time.Now().Add(2 * time.Minute); !fileExists(marker); time.Sleep(20 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the worker did not reach the kill point")
	}
	a.cmd.Wait()
	plan := planOf(t, s.repo, "tasks.json", "")
	wip := gittest.Git(t, s.remote, "rev-parse", "refs/heads/statgraph-wip/"+plan.Key+"/1")
	require.Empty(t, gittest.Git(t, s.remote, "for-each-ref", "refs/heads/"+plan.Branch("1")), "the kill came before the remote got the branch")

	b := startWorker(t, s, failLease, 1)
	r := waitRun()
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	s.checkFinal(t, 2)
	counts := countLines(effectLines(t, s.log))
	for _, step := range []string{"exec_1_1", "verify_1_1", "exec_2_1", "verify_2_1"} {
		require.Equal(t, 1, counts[step], "%s; log: %v", step, counts)
	}
	require.Equal(t, wip, gittest.Git(t, s.remote, "rev-parse", plan.Branch("1")), "unit 1's branch is the commit its run ended on")
	gittest.Git(t, s.remote, "merge-base", "--is-ancestor", plan.Branch("1"), plan.Branch("2"))
	data, err := os.ReadFile(b.stderr)
	require.NoError(t, err)
	require.True(t, strings.Contains(string(data), "unit 1 (") && strings.Contains(string(data), "taken up as done without running it again"),
		"the second worker's log:\n%s", data)
}
