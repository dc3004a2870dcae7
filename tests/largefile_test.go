//go:build scale

package tests

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/statgraph/statgraph/internal/gittest"
)

// TestRunWithLargeFileStaysBounded: with the per-file and per-attempt caps
// raised to 300 MiB, an agent CLI writes a 250 MiB text file, a small
// binary file and a one-line change. The run commits and publishes all
// three (the user's git reads the large blob back whole), and history
// shows every path: the large file as "<path>: N bytes, not shown", the
// binary one in git's "Binary files ... differ" form, the small change as
// a patch. statgraph's peak RSS (VmHWM, its own address space) stays
// under 200 MB through the run and through history. Before, the run
// peaked at about 850 MB: the workspace repository was opened without a
// large-object threshold, the publish built its pack in memory and the
// diff read the whole file. It takes a minute on a loaded machine, so it
// runs with the scale suite (make test-scale).
func TestRunWithLargeFileStaysBounded(t *testing.T) {
	const size = 250 << 20
	plan, err := json.Marshal(map[string]any{
		"defaults": map[string]any{"limits": map[string]any{"file_bytes": 300 << 20, "write_bytes": 300 << 20}},
		"tasks": []any{map[string]any{
			"id": 1, "title": "large", "max_retries": 1, "test_cmd": "true",
			"executor": map[string]any{"command": []string{"sh", "-c",
				`yes 'a line of text that repeats' | head -c 262144000 > big.txt && printf 'a\000b' > small.bin && echo changed >> README.md`}},
		}},
	})
	require.NoError(t, err)
	repo := newRepo(t, map[string]string{"README.md": "a repository\n", "tasks.json": string(plan)})

	peak := func(args ...string) (result, int64) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd, stdout, stderr := command(ctx, repo, args...)
		require.NoError(t, cmd.Start())
		done := make(chan struct{})
		var rss int64
		var wg sync.WaitGroup
		wg.Go(func() { rss = watchPeakRSS(cmd.Process.Pid, done) })
		err := cmd.Wait()
		close(done)
		wg.Wait()
		return wait(t, err, stdout, stderr), rss
	}

	r, rss := peak("run", "tasks.json")
	require.Equal(t, 0, r.code, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	t.Logf("peak RSS of statgraph run with a 250 MiB file: %.1f MB", float64(rss)/1e6)
	assert.Less(t, rss, int64(200e6), "statgraph run's peak RSS")

	branch := planOf(t, repo, "tasks.json", "").Branch("1")
	assert.Equal(t, "262144000", strings.TrimSpace(gittest.Git(t, repo, "cat-file", "-s", branch+":big.txt")))
	gittest.Git(t, repo, "fsck", "--full", "--strict")

	h, rss := peak("history", "1")
	require.Equal(t, 0, h.code, "stdout:\n%s\nstderr:\n%s", h.stdout, h.stderr)
	t.Logf("peak RSS of statgraph history: %.1f MB", float64(rss)/1e6)
	assert.Less(t, rss, int64(200e6), "statgraph history's peak RSS")
	assert.Contains(t, h.stdout, "big.txt: 262144000 bytes, not shown")
	assert.Contains(t, h.stdout, "Binary files /dev/null and b/small.bin differ")
	assert.Contains(t, h.stdout, "+changed")
	assert.Less(t, len(h.stdout), 1<<20, "history's output")
}
