package main

// This file is what run needs for --queue: the coordinator's flags and its
// Runner (see package queue and docs/scale-out.md).

import (
	"context"
	"flag"
	"fmt"
	"github.com/statgraph/statgraph/dispatch"
	"path/filepath"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/queue"
)

// queueFlags are run's --queue and --remote.
type queueFlags struct {
	url, remote string
}

func (q *queueFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&q.url, "queue", "", "Postgres `URL` of a River queue: enqueue the tasks for statgraph worker processes instead of running them here (see docs/scale-out.md)")
	fs.StringVar(&q.remote, "remote", "", "with --queue, the git remote `URL` workers clone from and push branches to (default: the repository itself, for workers on this machine)")
}

// coordinate makes d enqueue its units for workers and wait for their
// results; the returned function closes the connection.
func (q *queueFlags) coordinate(ctx context.Context, d *dispatch.Dispatcher, plan dispatch.Plan, file string) (func(), error) {
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
	d.Runner = r
	// Every ready unit is enqueued at once: the workers' concurrency is the
	// limit, not this process's.
	d.Jobs = max(d.Jobs, len(d.File.Units()))
	if d.Log != nil {
		fmt.Fprintf(d.Log, "units go to the queue at %s; workers push their branches to %s\n", queue.Redact(q.url), remote)
	}
	return pool.Close, nil
}

// queueReadUsage is the help of status's and history's --queue.
const queueReadUsage = "Postgres `URL` of the queue a run on workers used: read the checkpoints the workers keep there (default: the queue recorded for the plan by run --queue, else the local run store)"
