package queue

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/internal/pgtest"
	"github.com/statgraph/statgraph/tasks"
	"github.com/stretchr/testify/require"
)

func openTest(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, err := Open(context.Background(), pgtest.Database(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// enqueued enqueues unit id of a one-task plan and returns its job args.
func enqueued(t *testing.T, pool *pgxpool.Pool, id string) (*Runner, dispatch.Plan, UnitArgs) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "tasks.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"tasks":[{"id":`+id+`,"title":"t"}]}`), 0o644))
	r, err := NewRunner(pool, "file:///remote.git", file)
	require.NoError(t, err)
	plan := dispatch.Plan{Repo: dir, File: "tasks.json", Tag: "master", Key: "tasks-abc123"}
	require.NoError(t, r.enqueue(context.Background(), plan, PlanID(r.Remote, plan), id, 1))
	return r, plan, UnitArgs{PlanID: PlanID(r.Remote, plan), Key: plan.Key, Unit: id, Generation: 1}
}

// A worker whose token was replaced (River rescued its job and another
// worker took it) is refused: it pushes nothing and records nothing, the
// refusal is counted, and the other worker's result stands.
func TestPublishRefusesAWorkerThatLostTheUnit(t *testing.T) {
	ctx := context.Background()
	pool := openTest(t)
	_, _, a := enqueued(t, pool, "7")
	stale, fresh := uuid.New(), uuid.New()
	staleWorker, freshWorker := uuid.New(), uuid.New()
	_, done, err := claim(ctx, pool, a, stale, staleWorker, 0)
	require.NoError(t, err)
	require.False(t, done)
	_, done, err = claim(ctx, pool, a, fresh, freshWorker, 0) // the rescue
	require.NoError(t, err)
	require.False(t, done)

	pushed := 0
	push := func() error { pushed++; return nil }
	err = publish(ctx, pool, a, stale, staleWorker, result{Status: tasks.StatusFailed, Worker: "stale"}, 0, push)
	require.ErrorIs(t, err, ErrFenced)
	require.Zero(t, pushed, "a fenced worker must not push")
	require.NoError(t, publish(ctx, pool, a, fresh, freshWorker, result{Status: tasks.StatusDone, Branch: "b", Worker: "fresh"}, 0, push))
	require.Equal(t, 1, pushed)
	// Late again, after the result is recorded: still refused.
	require.ErrorIs(t, publish(ctx, pool, a, stale, staleWorker, result{Status: tasks.StatusFailed}, 0, push), ErrFenced)
	require.Equal(t, 1, pushed)

	gen, r, err := latest(ctx, pool, a.PlanID, a.Unit)
	require.NoError(t, err)
	require.Equal(t, 1, gen)
	require.Equal(t, "fresh", r.Worker)
	require.Equal(t, tasks.StatusDone, r.Status)
	var refusals int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM statgraph_refusals WHERE worker = $1`, staleWorker).Scan(&refusals))
	require.Equal(t, 2, refusals)
	// A job attempt arriving after the result (its worker died before
	// River marked the job complete) has nothing left to do.
	_, done, err = claim(ctx, pool, a, uuid.New(), uuid.New(), 0)
	require.NoError(t, err)
	require.True(t, done)
}

// A push that fails records no result, so the unit's job is retried.
func TestPublishFailedPushRecordsNothing(t *testing.T) {
	ctx := context.Background()
	pool := openTest(t)
	_, _, a := enqueued(t, pool, "3")
	tok, w := uuid.New(), uuid.New()
	_, _, err := claim(ctx, pool, a, tok, w, 0)
	require.NoError(t, err)
	boom := errors.New("remote unreachable")
	require.ErrorIs(t, publish(ctx, pool, a, tok, w, result{Status: tasks.StatusDone}, 0, func() error { return boom }), boom)
	_, r, err := latest(ctx, pool, a.PlanID, a.Unit)
	require.NoError(t, err)
	require.Nil(t, r)
}

// Enqueuing the same generation twice (a coordinator killed after
// enqueuing and started again) inserts one row and one job.
func TestEnqueueIsOncePerGeneration(t *testing.T) {
	ctx := context.Background()
	pool := openTest(t)
	r, plan, a := enqueued(t, pool, "5")
	require.NoError(t, r.enqueue(ctx, plan, a.PlanID, "5", 1))
	var rows, jobs int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM statgraph_units`).Scan(&rows))
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = 'statgraph_unit'`).Scan(&jobs))
	require.Equal(t, 1, rows)
	require.Equal(t, 1, jobs)
}

// A database migrated by a newer statgraph is refused untouched.
func TestMigrateRefusesANewerSchema(t *testing.T) {
	ctx := context.Background()
	pool := openTest(t)
	_, err := pool.Exec(ctx, `UPDATE statgraph_queue_schema SET version = $1`, SchemaVersion+1)
	require.NoError(t, err)
	err = Migrate(ctx, pool)
	require.ErrorIs(t, err, ErrNewerSchema)
	require.ErrorContains(t, err, "upgrade statgraph")
	var v int
	require.NoError(t, pool.QueryRow(ctx, `SELECT version FROM statgraph_queue_schema`).Scan(&v))
	require.Equal(t, SchemaVersion+1, v)
}

// A unit whose job ended with no result (River discarded it after its
// attempts ran out, or it was completed by an attempt that had lost the
// unit) is enqueued again as a new generation instead of being waited for
// for ever.
func TestRunnerReenqueuesAUnitWhoseJobEndedWithoutAResult(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool := openTest(t)
	r, plan, a := enqueued(t, pool, "4")
	r.Poll = 10 * time.Millisecond
	_, err := pool.Exec(ctx, `UPDATE river_job SET state = 'discarded', finalized_at = now()`)
	require.NoError(t, err)
	type out struct {
		res tasks.Outcome
		err error
	}
	got := make(chan out, 1)
	go func() {
		ran, err := r.RunUnit(ctx, plan, "4", nil, nil)
		got <- out{ran.Outcome, err}
	}()
	// Play the worker of generation 2.
	var gen int
	for gen < 2 {
		require.NoError(t, pool.QueryRow(ctx, `SELECT max(generation) FROM statgraph_units`).Scan(&gen))
		time.Sleep(10 * time.Millisecond)
	}
	a.Generation = 2
	tok, w := uuid.New(), uuid.New()
	_, _, err = claim(ctx, pool, a, tok, w, 0)
	require.NoError(t, err)
	require.NoError(t, publish(ctx, pool, a, tok, w, result{Status: tasks.StatusDone, RetryCount: 1}, 0, nil))
	o := <-got
	require.NoError(t, o.err)
	require.Equal(t, tasks.StatusDone, o.res.Status)
	var jobs int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM river_job`).Scan(&jobs))
	require.Equal(t, 2, jobs)
}

// Once the coordinator has run a unit again as a newer generation, a late
// result of the older one is refused.
func TestPublishRefusesAnOlderGeneration(t *testing.T) {
	ctx := context.Background()
	pool := openTest(t)
	r, plan, a := enqueued(t, pool, "9")
	tok, w := uuid.New(), uuid.New()
	_, _, err := claim(ctx, pool, a, tok, w, 0)
	require.NoError(t, err)
	gen, err := r.enqueueAfter(ctx, plan, a.PlanID, "9", 1)
	require.NoError(t, err)
	require.Equal(t, 2, gen)
	pushed := false
	err = publish(ctx, pool, a, tok, w, result{Status: tasks.StatusDone}, 0, func() error { pushed = true; return nil })
	require.ErrorIs(t, err, ErrFenced)
	require.False(t, pushed)
}
