package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/internal/pgtest"
	"github.com/stretchr/testify/require"
)

// A unit job's size does not grow with the plan: the job names the tasks
// file's version, stored once in statgraph_files however many units of
// it are enqueued, and a worker reads that version back. (A job carried
// the whole file: 2,000 tasks made each job about 100 kB.)
func TestJobSizeDoesNotGrowWithThePlan(t *testing.T) {
	ctx := context.Background()
	pool := openTest(t)
	jobSize := func(n int) (int, []byte, UnitArgs) {
		t.Helper()
		type task struct {
			ID          int    `json:"id"`
			Title       string `json:"title"`
			Description string `json:"description"`
		}
		var f struct {
			Tasks []task `json:"tasks"`
		}
		for i := 1; i <= n; i++ {
			f.Tasks = append(f.Tasks, task{ID: i, Title: fmt.Sprint("task ", i), Description: "what the task is about, in a sentence or two"})
		}
		data, err := json.Marshal(f)
		require.NoError(t, err)
		dir := t.TempDir()
		file := filepath.Join(dir, "tasks.json")
		require.NoError(t, os.WriteFile(file, data, 0o644))
		r, err := NewRunner(pool, "file:///remote-"+fmt.Sprint(n)+".git", file)
		require.NoError(t, err)
		plan := dispatch.Plan{Repo: dir, File: "tasks.json", Tag: "master", Key: "tasks-abc123"}
		pid := PlanID(r.Remote, plan)
		for _, id := range []string{"1", "2", "3"} {
			require.NoError(t, r.enqueue(ctx, plan, pid, id, 1))
		}
		var size int
		var args []byte
		require.NoError(t, pool.QueryRow(ctx, `SELECT octet_length(j.args::text), j.args FROM river_job j
			JOIN statgraph_units u ON u.job_id = j.id WHERE u.plan = $1 AND u.unit = '1'`, pid).Scan(&size, &args))
		var a UnitArgs
		require.NoError(t, json.Unmarshal(args, &a))
		return size, data, a
	}
	small, _, _ := jobSize(2)
	large, data, a := jobSize(2000)
	require.Greater(t, len(data), 100_000)
	require.LessOrEqual(t, large, small+16, "a job of a 2,000-task plan is %d bytes, of a 2-task plan %d", large, small)

	var versions int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM statgraph_files`).Scan(&versions))
	require.Equal(t, 2, versions, "one version per plan, however many units were enqueued")
	var c fileCache
	got, err := c.load(ctx, pool, a.TasksHash)
	require.NoError(t, err)
	require.Equal(t, data, got, "the worker reads the version the job names")
	_, err = c.load(ctx, pool, fileHash([]byte("no such file")))
	require.ErrorIs(t, err, errNoFile)
}

// Every ready unit of a plan is enqueued at once (the coordinator runs
// them all concurrently): with more units than the pool has connections,
// enqueuing still finishes. Storing the tasks file inside the enqueuing
// transaction took a second connection while the transactions held them
// all: 20 units on a pool of 2 waited for ever.
func TestEnqueueManyUnitsAtOnceOnASmallPool(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db := pgtest.Database(t)
	sep := "?"
	if strings.Contains(db, "?") {
		sep = "&"
	}
	pool, err := Open(ctx, db+sep+"pool_max_conns=2")
	require.NoError(t, err)
	defer pool.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "tasks.json")
	var ts []string
	for i := 1; i <= 20; i++ {
		ts = append(ts, fmt.Sprintf(`{"id":%d,"title":"t"}`, i))
	}
	require.NoError(t, os.WriteFile(file, []byte(`{"tasks":[`+strings.Join(ts, ",")+`]}`), 0o644))
	r, err := NewRunner(pool, "file:///remote.git", file)
	require.NoError(t, err)
	plan := dispatch.Plan{Repo: dir, File: "tasks.json", Tag: "master", Key: "tasks-abc123"}
	errs := make(chan error, 20)
	for i := 1; i <= 20; i++ {
		go func() { errs <- r.enqueue(ctx, plan, PlanID(r.Remote, plan), fmt.Sprint(i), 1) }()
	}
	for range 20 {
		require.NoError(t, <-errs)
	}
	var rows int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM statgraph_units WHERE job_id IS NOT NULL`).Scan(&rows))
	require.Equal(t, 20, rows)
}
