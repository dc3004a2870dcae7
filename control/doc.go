// Package control is the shared backend of the ways to see and steer one
// plan (a tasks file and tag) from outside a terminal: the web UI and its
// JSON API (statgraph serve), the MCP server (statgraph mcp) and the
// inspecting commands. There is one copy of each operation, here.
//
//	c, err := control.Open(control.Options{File: "tasks.json", Run: control.RunOptions{Model: llm.ConfigFromEnv()}})
//	defer c.Close()
//
// Reading, which writes nothing:
//   - Tasks: every unit with its status (tasks file plus results journal),
//     dependencies, and phase, graph node, attempt and tokens (from the
//     in-process run's reports, else the run store), and its pending
//     Question;
//   - History: a task's attempts with the agent's summary, the checks'
//     failure output, the feedback sent back, tokens and each attempt's
//     diff (what statgraph history --json prints);
//   - Run: whether the in-process run is going on, or how the last ended.
//
// Changing, each under the plan's lock (tasks.Lock), so never while a run
// holds it (ErrRunning); the lock is taken before the file is read:
//   - AddTask: one task, validated as tasks.Load validates a file; nothing
//     is written on error;
//   - Expand: subtasks the model writes for a pending task (statgraph
//     expand), checked as a file is; WritePlan (a function: the file may
//     not exist yet) writes a new tag from a requirements document
//     (statgraph plan); Complexity writes task-master's complexity report
//     and changes no task;
//   - Reset: failed or blocked tasks back to pending (all when no id), as
//     statgraph reset and run --retry-failed do;
//   - Start: a run of the pending tasks in this process, with statgraph
//     run's checks (repository, sandbox, state paths, preflight) and
//     settings (Options.Run, which statgraph run's Dispatcher is made from
//     too); one at a time, and refused with ErrRunning while
//     a run started elsewhere holds the lock. Stop cancels it as the first
//     Ctrl-C does. An escalation (on_exhausted "ask") waits as a Question
//     until Answer(unit, "retry"|"skip"|"abort"); a plan to approve
//     (approve_plan) until Reply(unit, approve | edit with the plan |
//     reject with the reason);
//   - Review: a done task back to pending with review comments on its
//     diff as the feedback of its next attempt, as statgraph review does.
//
// Events: Subscribe returns a bounded channel of Events. While anyone is
// subscribed, the Control compares the units every Poll interval and at
// once when its own run reports, and sends one EventTask per changed unit;
// so a run started in a terminal is watched the same way as its own. A
// slow subscriber never blocks the run: it loses events and is then sent
// EventResync, after which it reads Tasks again.
//
// A run is set up in one way, whoever starts it: Prepare takes the plan's
// lock, loads the tasks file, checks the repository, state paths, sandbox
// and setup, settles the results journal and opens the run store, in that
// order (statgraph run calls it; Start does). Clean removes what finished
// tasks left, here and, for a plan whose run went to workers (statgraph
// run --queue, which records its queue with RecordQueue), in the queue's
// store and on its remote; the reads (Tasks, History) read the workers'
// checkpoints there too, so every front end sees them.
//
// Every method is safe for concurrent use. Errors say what failed and
// what to do; the sentinel errors (ErrRunning, ErrNotRunning,
// ErrNoQuestion, ErrNoRun, ErrNoTask) are matched with errors.Is. Their
// text reads well as it is, and the front ends show it unchanged:
// Classify gives an error's Kind, which the CLI maps to an exit code, the
// web API to an HTTP status and MCP to its tool text, and advice in each
// front end's words.
package control
