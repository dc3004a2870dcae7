// Package durable is statgraph's functional API (LangGraph's @entrypoint
// and @task, Temporal's workflow and activity): plain Go code whose steps
// are durable. A Workflow runs an entrypoint, an ordinary function; the
// entrypoint calls Tasks, and each finished task's result is recorded in
// the thread's checkpointer as soon as it is known. When the thread is run
// again after a crash, an error or an interrupt, the entrypoint runs again
// from its start and every task call that finished before returns its
// recorded result at once instead of running: the code replays up to where
// it stopped, then goes on.
//
//	var fetch = durable.NewTask("fetch", func(ctx context.Context, url string) (string, error) { ... },
//		durable.WithRetry(statgraph.RetryPolicy{MaxAttempts: 5}))
//
//	w, err := durable.New("summarise", store, func(ctx context.Context, urls []string) (string, error) {
//		pages := make([]*durable.Future[string], len(urls))
//		for i, u := range urls {
//			pages[i] = fetch.Call(ctx, u) // the fetches run in parallel
//		}
//		...
//	})
//	out, err := w.Invoke(ctx, "thread-1", urls)
//
// A workflow is a compiled one-node statgraph graph whose node is the
// entrypoint, so its checkpoints, Durability, interrupts, history and
// streaming are the library's, on any Checkpointer (memory, SQLite,
// Postgres). A task is a compiled one-node graph too, so its retry policy,
// timeout and cache are those of a statgraph node (statgraph.WithRetry,
// WithTimeout, WithCache). The tasks' records of a run are the pending
// writes of one checkpoint of a thread of the same checkpointer, named
// State.Run, "<thread>|tasks:<id>": each record is appended (PutWrites) as
// its task finishes, so a process killed while tasks run loses only the
// unfinished ones.
//
// The entrypoint must be deterministic in the tasks it calls: on replay,
// the k-th task call must be the task of the same name with the same input
// (JSON) as in the run being replayed, or the call fails with
// ErrNondeterministic and the run stops (nothing is recorded over the old
// records). Read clocks, random numbers and anything outside the program
// inside tasks, whose results are recorded, not in the entrypoint.
// Calls are numbered in the order Call is reached, so start tasks from the
// entrypoint's own goroutine.
//
// Interrupt pauses the run from the entrypoint or from inside a task; Resume
// continues it, replaying finished tasks. Interrupts are numbered in the
// order they are reached (statgraph.Interrupt's IDs): tasks that may pause
// should not run at the same time as other tasks that may pause.
//
// A drain (package statgraph/drain) lets the tasks running finish and be
// recorded, starts no new one, and fails the run with an error wrapping
// drain.ErrDrained; running the thread again continues it. Under
// statgraph.DurabilityExit the run's input is not saved, so a crash loses
// the run and its tasks run again in a new one.
//
// Designs turned down: tasks as nodes of a graph built at run time (the
// code would have to be a graph); task results in the workflow's state (a
// state is saved only at the end of a step, so a crash in the middle would
// lose every finished task); matching records by task name alone (a
// changed input would silently replay a result computed for another one).
package durable
