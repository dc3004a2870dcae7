package control

// This file prepares a queue worker (statgraph worker) as Prepare prepares
// a run, so that a unit on a worker is checked and run as a task in a run
// here is (see package queue for the worker's side of the queue).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/google/uuid"

	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/queue"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/postgres"
)

// WorkerOptions are the settings of a queue worker, as statgraph worker's
// flags give them.
type WorkerOptions struct {
	// Queue is the Postgres URL of the queue the worker takes units from.
	Queue string
	// Run holds the settings each unit's Dispatcher is made from, as a
	// run's is (RunOptions.Dispatcher): Model, NoSandbox, AllowEnv,
	// GoCacheProg, SandboxProbe, SandboxHelper, Tracer and Log. The run's
	// limits (budget, deadlines, parking, prices, kept workspaces) are not
	// the worker's: each unit carries its coordinator's (queue.Limits).
	Run RunOptions
	// Log receives the worker's lines (units taken, finished, refused);
	// nil discards them.
	Log io.Writer
}

// PreparedWorker is a worker ready to Start: its queue open, its run store
// (the queue's Postgres) open and its units' Dispatchers made by Prepare's
// steps. Close releases them once the worker has stopped.
type PreparedWorker struct {
	// Worker takes the units; the caller starts it and heartbeats.
	Worker *queue.Worker

	close func()
}

// PrepareWorker sets up a queue worker with the steps Prepare takes for a
// run, in Prepare's order where they apply: the sandbox is checked once
// (RunOptions.Check's first step), the run store is opened (the queue's
// Postgres, shared by every worker, so that a unit taken over continues
// from its last checkpoint whichever machine takes it), and each unit's
// plan is checked (its state paths, as CheckPlan checks a run's) before
// its Dispatcher is made as a run's is (RunOptions.Dispatcher). There is
// no plan lock to take and no journal to settle: the coordinator holds
// the plan's, and a worker records its results in the queue.
//
// On error nothing is left open and the error says what to do.
func PrepareWorker(ctx context.Context, o WorkerOptions) (*PreparedWorker, error) {
	if err := checkSandbox(o.Run.NoSandbox); err != nil {
		return nil, err
	}
	root, err := workspace.StateRoot()
	if err != nil {
		return nil, kinded(KindRefused, err)
	}
	pool, err := queue.Open(ctx, o.Queue)
	if err != nil {
		return nil, err
	}
	st, err := postgres.New(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, err
	}
	reader, err := ReaderGraph(st)
	if err != nil {
		st.Close()
		pool.Close()
		return nil, err
	}
	w := &queue.Worker{
		Pool: pool, ID: uuid.New(), Root: filepath.Join(root, "worker"), Checkpointer: st, Log: o.Log, AllowEnv: o.Run.AllowEnv,
		LastAttempt: func(ctx context.Context, thread string) (string, bool, error) {
			snap, err := reader.State(ctx, thread)
			if errors.Is(err, statgraph.ErrNoCheckpoint) {
				return "", false, nil
			}
			if err != nil || len(snap.Next) == 0 {
				return "", false, err
			}
			commit := ""
			if n := len(snap.State.Attempts); n > 0 {
				commit = snap.State.Attempts[n-1].Commit
			}
			return commit, true, nil
		},
		Prepare: o.Run.unitDispatcher,
	}
	return &PreparedWorker{Worker: w, close: func() { st.Close(); pool.Close() }}, nil
}

// Close closes the worker's run store and queue. Call it once the worker
// has stopped.
func (p *PreparedWorker) Close() { p.close() }

// unitDispatcher makes the Dispatcher of a unit a worker runs: its plan's
// state paths checked (dispatch.Plan.Check, CheckPlan's second step; the
// repository is the worker's mirror of the remote, which statgraph made),
// then the Dispatcher made with these settings (Dispatcher).
func (o RunOptions) unitDispatcher(_ context.Context, u queue.UnitSetup) (*dispatch.Dispatcher, error) {
	if err := u.Plan.Check(); err != nil {
		return nil, kinded(KindRefused, fmt.Errorf("%w; the unit was not run", err))
	}
	return o.Dispatcher(u.File, u.Plan.Repo, u.Checkpointer), nil
}
