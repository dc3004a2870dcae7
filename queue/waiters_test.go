package queue

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/internal/pgtest"
	"github.com/statgraph/statgraph/tasks"
	"github.com/stretchr/testify/require"
)

// unitReads counts the queries that read statgraph_units without locking
// or changing it: the coordinator's waiting, including its checks of the
// units' River jobs.
type unitReads struct{ n atomic.Int64 }

func (c *unitReads) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	sql := strings.TrimSpace(d.SQL)
	if strings.HasPrefix(sql, "SELECT") && strings.Contains(sql, "FROM statgraph_units") && !strings.Contains(sql, "FOR UPDATE") {
		c.n.Add(1)
	}
	return ctx
}

func (c *unitReads) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// A coordinator waiting for many units reads their rows, and whether their
// River jobs are still alive, with one query per poll for all of them, not
// one per unit: with 40 units waiting, the reads are one per poll, and each
// unit still gets its own result. (The jobs were checked by a query per
// unit every 25 polls: 80 more reads here.)
func TestRunnerWaitsForManyUnitsWithOneQueryPerPoll(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := pgxpool.ParseConfig(pgtest.Database(t))
	require.NoError(t, err)
	reads := &unitReads{}
	cfg.ConnConfig.Tracer = reads
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	require.NoError(t, Migrate(ctx, pool))

	const n = 40
	dir := t.TempDir()
	file := filepath.Join(dir, "tasks.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"tasks":[{"id":1,"title":"t"}]}`), 0o644))
	r, err := NewRunner(pool, "file:///remote.git", file)
	require.NoError(t, err)
	r.Poll = 20 * time.Millisecond
	plan := dispatch.Plan{Repo: dir, File: "tasks.json", Tag: "master", Key: "tasks-abc123"}
	pid := PlanID(r.Remote, plan)
	for i := 1; i <= n; i++ {
		require.NoError(t, r.enqueue(ctx, plan, pid, strconv.Itoa(i), 1))
	}

	type out struct {
		res    tasks.Outcome
		branch string
		err    error
	}
	got := make([]out, n+1)
	var wg sync.WaitGroup
	start := time.Now()
	reads.n.Store(0)
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ran, err := r.RunUnit(ctx, plan, strconv.Itoa(i), nil, nil)
			got[i] = out{ran.Outcome, ran.Branch, err}
		}()
	}
	require.Eventually(t, func() bool {
		r.waiters.mu.Lock()
		defer r.waiters.mu.Unlock()
		return len(r.waiting) == n
	}, 30*time.Second, time.Millisecond, "every unit waits")
	// Play the workers: every unit's result, each with its own branch.
	for i := 1; i <= n; i++ {
		a := UnitArgs{PlanID: pid, Key: plan.Key, Unit: strconv.Itoa(i), Generation: 1}
		tok, w := uuid.New(), uuid.New()
		_, _, err := claim(ctx, pool, a, tok, w, 0)
		require.NoError(t, err)
		require.NoError(t, publish(ctx, pool, a, tok, w, result{Status: tasks.StatusDone, RetryCount: i, Branch: "b" + a.Unit}, 0, nil))
	}
	wg.Wait()
	polls := time.Since(start) / r.Poll
	for i := 1; i <= n; i++ {
		require.NoError(t, got[i].err, "unit %d", i)
		require.Equal(t, tasks.StatusDone, got[i].res.Status, "unit %d", i)
		require.Equal(t, i, got[i].res.RetryCount, "unit %d", i)
		require.Equal(t, "b"+strconv.Itoa(i), got[i].branch, "unit %d", i)
	}
	// RunUnit's first look is one read per unit; the waiting, one per poll.
	// Reading per unit would be about n per poll.
	waitReads := reads.n.Load() - n
	t.Logf("%d units waited %d polls with %d reads of statgraph_units", n, polls, waitReads)
	require.LessOrEqual(t, waitReads, int64(polls)+5, "the waiting read each unit's row or job on its own")
}
