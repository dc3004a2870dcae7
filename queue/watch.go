package queue

// This file is the coordinator's watch over the workers: a run whose
// units wait in the queue with no live worker to take them says so, and
// ends when none appears in time.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// ErrNoWorker is the cause with which Watch stops a run when no worker
// appeared within its timeout.
var ErrNoWorker = errors.New("queue: no live worker")

// WatchOptions say how Watch reports and acts.
type WatchOptions struct {
	// Log receives the warnings; nil discards them.
	Log io.Writer
	// Every is how often the warning is repeated while units wait with no
	// live worker; 0 means a minute.
	Every time.Duration
	// Timeout ends the run (Stop) when no live worker has been seen this
	// long after Watch began; 0 means never.
	Timeout time.Duration
	// Stop ends the run with a cause wrapping ErrNoWorker.
	Stop func(cause error)
}

// watchPoll is how often Watch counts the live workers.
const watchPoll = time.Second

// Watch looks for live workers (statgraph_workers, see Heartbeat) every
// second until ctx ends. While units of this Runner wait for a result and
// no worker is alive, it writes to o.Log, at once and then every o.Every,
// how many units wait; with o.Timeout, when no worker was alive at any
// look since Watch began and the timeout has passed, it calls o.Stop and
// returns. A failed look is skipped. Call it in a goroutine the caller
// waits for.
func (r *Runner) Watch(ctx context.Context, o WatchOptions) {
	every := o.Every
	if every <= 0 {
		every = time.Minute
	}
	began := time.Now()
	seen := false
	var warned time.Time
	t := time.NewTicker(watchPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		qctx, cancel := context.WithTimeout(ctx, spendTimeout)
		live, err := liveWorkers(qctx, r.Pool)
		cancel()
		if err != nil {
			continue
		}
		if live > 0 {
			seen, warned = true, time.Time{}
			continue
		}
		if o.Timeout > 0 && !seen && time.Since(began) >= o.Timeout {
			if o.Stop != nil {
				o.Stop(fmt.Errorf("%w appeared within --worker-timeout %s: start statgraph worker --queue URL on a machine that can reach the queue "+
					"(a worker that exits at start says why on its output), then run statgraph resume --queue URL", ErrNoWorker, o.Timeout))
			}
			return
		}
		n := r.waitingCount()
		if n == 0 || (!warned.IsZero() && time.Since(warned) < every) {
			continue
		}
		warned = time.Now()
		if o.Log != nil {
			fmt.Fprintf(o.Log, "statgraph: no live worker: %d unit(s) wait in the queue; start statgraph worker --queue URL "+
				"(workers last seen: statgraph status --queue URL)\n", n)
		}
	}
}

// waitingCount is how many units the Runner waits for.
func (r *Runner) waitingCount() int {
	r.waiters.mu.Lock()
	defer r.waiters.mu.Unlock()
	return len(r.waiting)
}
