package main

// statgraph worker and statgraph migrate: the worker side of scale-out
// (see package queue and docs/scale-out.md).

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/queue"
	"github.com/statgraph/statgraph/statgraph/drain"
)

func cmdMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("migrate", stderr)
	url := fs.String("queue", "", "Postgres `URL` of the queue to migrate (River's schema and statgraph's)")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	if *url == "" {
		return usagef("migrate: --queue URL is required, e.g. --queue postgres://user:pass@host:5432/db")
	}
	pool, err := queue.Open(ctx, *url) // Open migrates
	if err != nil {
		return err
	}
	pool.Close()
	fmt.Fprintf(stdout, "%s: River's and statgraph's schema are up to date (statgraph schema version %d)\n", queue.Redact(*url), queue.SchemaVersion)
	return nil
}

func cmdWorker(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("worker", stderr)
	url := fs.String("queue", "", "Postgres `URL` of the queue to take tasks from (required)")
	concurrency := fs.Int("concurrency", 1, "tasks this worker runs at once")
	lease := fs.Duration("lease", queue.DefaultLease, "longest a task may run on a worker: past it the task is cancelled and continues later from its checkpoint; a worker that died is replaced this long (plus 5s, plus up to 30s) after it took the task")
	model := fs.String("model", "", "model name for the LLM planner and executor (default $STATGRAPH_MODEL)")
	noSandbox := fs.Bool("no-sandbox", false, "run checks and agent CLIs without the bubblewrap sandbox (unprotected: see docs/sandbox-and-secrets.md)")
	allowEnv := fs.String("allow-env", "", "comma-separated environment variables (NAME or PREFIX*) of this worker passed to agent CLIs besides those their preset declares; a task whose executor env names anything else is refused (ends failed, nothing run)")
	if _, err := parse(fs, args, 0); err != nil {
		return exitUsage, err
	}
	switch {
	case *url == "":
		return exitUsage, usagef("worker: --queue URL is required, e.g. --queue postgres://user:pass@host:5432/db")
	case *concurrency < 1:
		return exitUsage, usagef("worker: --concurrency %d: want 1 or more", *concurrency)
	case *lease <= 0:
		return exitUsage, usagef("worker: --lease %s: want a positive duration such as 30m", *lease)
	}
	if *noSandbox {
		fmt.Fprintln(stderr, "warning: --no-sandbox: checks and agent CLIs run unprotected: they can write anywhere this worker can, "+
			"read its environment through /proc, leave processes running and use the network")
	}
	mc := llm.ConfigFromEnv()
	if *model != "" {
		mc.Model = *model
	}
	var allow []string
	for _, name := range strings.Split(*allowEnv, ",") {
		if name = strings.TrimSpace(name); name != "" {
			allow = append(allow, name)
		}
	}
	// Traced as run is, from the same OTEL_* variables: each unit this
	// worker runs is a "task" span with its attempts, nodes, model calls
	// and checks; what is left is flushed when the worker stops.
	tp, flush := tracingFromEnv(ctx, os.Getenv, stderr)
	defer flush()
	ro := control.RunOptions{Model: mc, NoSandbox: *noSandbox, AllowEnv: allow, Tracer: tp, Log: stderr}
	if exe, _ := os.Executable(); exe != "" {
		ro.GoCacheProg = []string{exe, goCacheProgCmd}
		ro.SandboxProbe = []string{exe, sandboxProbeCmd}
		ro.SandboxHelper = []string{exe, sandboxInitCmd}
	}
	pw, err := control.PrepareWorker(ctx, control.WorkerOptions{Queue: *url, Run: ro, Log: stderr})
	if err != nil {
		return exitCode(err), err
	}
	defer pw.Close()
	w := pw.Worker
	// The units' contexts carry a drain switch, flipped on SIGTERM.
	wctx, requestDrain := drain.WithRequest(ctx)
	client, err := w.Start(wctx, *concurrency, *lease)
	if err != nil {
		return exitFailed, err
	}
	fmt.Fprintf(stderr, "worker %s: taking tasks from %s, %d at a time, lease %s\n", w.ID, queue.Redact(*url), *concurrency, *lease)
	fmt.Fprintf(stderr, "worker %s: limits: each task's run's (its --budget, shared with the run's other workers, --task-timeout, "+
		"--request-timeout, --max-response-bytes, --keep-workspaces, --park-after, --park-max, --park-default, --prices), said as each task is taken\n", w.ID)
	// The worker's row in statgraph_workers, kept up to date until it
	// stops: status --queue, the web UI and MCP list it.
	bctx, endBeat := context.WithCancel(ctx)
	beat := make(chan error, 1)
	go func() { beat <- w.Heartbeat(bctx, *concurrency) }()
	defer func() { endBeat(); <-beat }()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	select {
	case sig := <-sigs:
		if sig == syscall.SIGTERM {
			return drainWorker(ctx, client, w.ID, requestDrain, sigs, stderr)
		}
	case <-ctx.Done():
	case err := <-beat:
		beat <- err // for the deferred wait
		if err != nil {
			client.StopAndCancel(context.WithoutCancel(ctx))
			return exitFailed, err
		}
	}
	return stopWorker(ctx, client, w.ID, stderr)
}

// stopWorker stops a worker at once: its running units are cancelled and
// continue from their last checkpoints on another worker.
func stopWorker(ctx context.Context, client *river.Client[pgx.Tx], id uuid.UUID, stderr io.Writer) (int, error) {
	fmt.Fprintf(stderr, "worker %s: stopping; running tasks are interrupted and continue from their checkpoints on another worker\n", id)
	if err := client.StopAndCancel(context.WithoutCancel(ctx)); err != nil {
		return exitFailed, err
	}
	return exitInterrupted, nil
}

// drainWorker drains a worker on SIGTERM (a redeploy): it takes no new
// unit, lets each running unit finish its current step and checkpoint it,
// releases the units for another worker, and exits 0. A second signal
// stops at once, as Ctrl-C does.
func drainWorker(ctx context.Context, client *river.Client[pgx.Tx], id uuid.UUID, requestDrain func(), sigs <-chan os.Signal, stderr io.Writer) (int, error) {
	fmt.Fprintf(stderr, "worker %s: SIGTERM: draining: no new task is taken; running tasks finish their current step, save it and are released "+
		"to continue on another worker (signal again to stop at once)\n", id)
	requestDrain()
	stopped := make(chan error, 1)
	go func() { stopped <- client.Stop(context.WithoutCancel(ctx)) }()
	select {
	case err := <-stopped:
		if err != nil {
			return exitFailed, err
		}
		fmt.Fprintf(stderr, "worker %s: drained\n", id)
		return exitOK, nil
	case <-sigs:
	case <-ctx.Done():
	}
	code, err := stopWorker(ctx, client, id, stderr)
	<-stopped
	return code, err
}
