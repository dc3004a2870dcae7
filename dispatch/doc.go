// Package dispatch runs the tasks of a tasks file (package tasks) through
// the orchestrator graph (package agents): in dependency order,
// independent units in parallel, each in its own git workspace stacked on
// its dependencies' published branches, with a checkpoint after every step
// so that a killed run continues where it stopped.
//
// A Dispatcher owns the run: which unit starts when (Run's loop), the
// sandbox its checks and agent CLI run in, publishing its branch, and
// recording its outcome, one tasks.Outcome that the file applies in one
// step (tasks.File.Apply) and the results journal makes durable at once.
// Where a unit runs is the one seam, Runner: by default in this process;
// with a Runner (queue.Runner, River on Postgres), on workers, each of
// which runs its unit with RunOne. Plan keys a tasks file's state outside
// the repository: workspaces, threads, branches and the run store.
//
// Before a run writes anything, Preflight checks that the setup can run
// the runnable tasks (a model where one is needed and answering, the key,
// each agent CLI on PATH). During a run, an infrastructure error
// (agents.InfraError: a rejected key, an unreachable server, an agent CLI
// missing or crashing on start) leaves the unit interrupted with its retry
// count unchanged; the next run continues it from its checkpoint. A
// provider's usage limit with a reset time (llm.LimitError) parks the unit
// instead: recorded parked with parked_until, no retry used, started
// again by the same run at that time (park.go); an exhausted quota
// (llm.ErrQuota) stops the run.
//
// The package sits above tasks, agents and the verifier, so that the file
// format stays a leaf that anything may read without the orchestrator.
package dispatch
