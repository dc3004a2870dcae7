package main

// This file is what run needs for --queue: the coordinator's flags and its
// Runner (see package queue and docs/scale-out.md).

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/queue"
)

// queueFlags are run's --queue, --remote and --worker-timeout.
type queueFlags struct {
	url, remote   string
	workerTimeout time.Duration
}

func (q *queueFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&q.url, "queue", "", "Postgres `URL` of a River queue: enqueue the tasks for statgraph worker processes instead of running them here (see docs/scale-out.md)")
	fs.StringVar(&q.remote, "remote", "", "with --queue, the git remote `URL` workers clone from and push branches to (default: the repository itself, for workers on this machine)")
	fs.DurationVar(&q.workerTimeout, "worker-timeout", 0, "with --queue, end the run interrupted when no live worker appears within this `duration`, e.g. 10m (default: wait)")
}

// coordinate makes d enqueue its units for workers and wait for their
// results, each unit carrying the run's limits ro (see queue.Limits): the
// run's spend is one total in the queue, which d's budget checks before
// each unit starts. While the run goes on, a watch warns when units wait
// with no live worker, and with --worker-timeout stops the run (stop)
// when none appears in time. The returned function ends the watch and
// closes the connection.
func (q *queueFlags) coordinate(ctx context.Context, d *dispatch.Dispatcher, plan dispatch.Plan, file string, ro control.RunOptions, stop func(error)) (func(), error) {
	pool, err := queue.Open(ctx, q.url)
	if err != nil {
		return nil, err
	}
	remote := q.remote
	if remote == "" {
		abs, err := filepath.Abs(plan.Repo)
		if err != nil {
			pool.Close()
			return nil, err
		}
		remote = abs
	}
	if err := control.RecordQueue(plan, control.QueueRecord{Queue: q.url, Remote: remote}); err != nil {
		pool.Close()
		return nil, err
	}
	r, err := queue.NewRunner(pool, remote, file)
	if err != nil {
		pool.Close()
		return nil, err
	}
	spend, err := queue.StartSpend(ctx, pool, queue.PlanID(remote, plan), ro.Budget)
	if err != nil {
		pool.Close()
		return nil, err
	}
	r.Limits = queue.Limits{Run: spend.Run, BudgetTokens: ro.Budget, BudgetUSD: ro.BudgetUSD, TaskTimeout: ro.TaskTimeout,
		RequestTimeout: ro.Model.Timeout, MaxResponseBytes: ro.Model.MaxResponseBytes, KeepWorkspaces: ro.KeepWorkspaces,
		ParkAfter: ro.Model.ParkAfter, ParkMax: ro.ParkMax, ParkDefault: ro.ParkDefault, Prices: ro.Prices}
	d.Budget = llm.NewRunBudget(llm.Limit{Tokens: ro.Budget, USD: ro.BudgetUSD}, spend)
	d.Runner = r
	// Every ready unit is enqueued at once: the workers' concurrency is the
	// limit, not this process's.
	d.Jobs = max(d.Jobs, len(d.File.Units()))
	if d.Log != nil {
		fmt.Fprintf(d.Log, "units go to the queue at %s; workers push their branches to %s; limits: %s\n", queue.Redact(q.url), remote, r.Limits)
	}
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { r.Watch(wctx, queue.WatchOptions{Log: d.Log, Timeout: q.workerTimeout, Stop: stop}) })
	return func() { cancel(); wg.Wait(); pool.Close() }, nil
}

// queueReadUsage is the help of status's and history's --queue.
const queueReadUsage = "Postgres `URL` of the queue a run on workers used: read the checkpoints the workers keep there (default: the queue recorded for the plan by run --queue, else the local run store)"
