// Package tasks reads, checks, orders and writes back statgraph's task
// list, tasks.json. It is the file format only, and a leaf: it imports
// nothing of the agents, the verifier, the git workspaces or go-git
// (TestLeaf holds it so), so anything that reads a tasks file can use it
// alone. Running the tasks is package dispatch's work, above it; commands
// and checks are plain data here (Command, Check), which the dispatcher
// hands to the verifier.
//
// # The file
//
// A tasks file has claude-task-master's shape, {"tasks": [...]}, or its
// tagged form {"<tag>": {"tasks": [...]}} where the tag is chosen by name
// (DefaultTag, "master", unless told otherwise). Each task has task-master's
// fields (id, title, description, status, dependencies, priority, details,
// testStrategy, subtasks) and may add statgraph's own: max_retries,
// test_cmd, lint_cmd, checks, review, workdir, executor, model, on_exhausted,
// approve_plan and budget_tokens. A top-level "defaults" object (in the tagged form also one
// inside the tag, which wins) supplies any of those a task leaves out; a
// subtask first takes its parent's. statgraph records its progress in
// status, status_reason, retry_count, error_history, failed_at and, for
// a task parked by a usage limit, parked_until.
//
//	{
//	  "defaults": {"max_retries": 3, "test_cmd": "go test ./...", "lint_cmd": ["go", "vet", "./..."]},
//	  "tasks": [
//	    {"id": 1, "title": "Fix the parser", "details": "..."},
//	    {"id": 2, "title": "Add the flag", "dependencies": [1],
//	     "executor": {"command": ["./agent.sh", "{prompt_file}", "{workdir}", "{attempt}"]},
//	     "subtasks": [{"id": 1, "title": "Parse it"}, {"id": 2, "title": "Document it", "dependencies": [1]}]}
//	  ]
//	}
//
// A command is a string run with sh -c or an array run directly. The
// executor is "llm" (the default), an agent CLI preset by name (one of
// ExecutorPresets), or any agent CLI given as {"command": [...]} with the
// placeholders in Placeholders (see Executor).
//
// # Loading and validation
//
// Load and Parse accept a file only when it has no errors, and report
// every problem at once in a *ValidationError, each with file:line:col (col
// in bytes) and the task id. What task-master itself works with is a
// warning (File.Warnings) rather than an error: an unknown status (the task
// does not run), problems confined to tasks that will not run, a
// dependency on another tag, and a problem confined to one task that would
// run (duplicate ids among its subtasks, a dependency on itself, its parent,
// its own subtask or an id no task has, a cycle among its subtasks); the
// last two block the task, and so the tasks depending on it, with the
// problem as the reason (Unit.Hold). Duplicate ids between tasks and
// cycles across tasks stay errors. Task ids follow the one
// rule of internal/taskid, which the git workspaces apply too, so a file
// Load accepts is one a run can work on. Loading never writes. Fields
// statgraph does not know are kept as they were read, in their original
// order and spelling.
//
// # Drafts
//
// AddTag and AddSubtasks write task lists that come from a model
// (statgraph plan and expand): a new tag, spliced into the file with
// every other byte kept, or new subtasks of a pending task. Both refuse
// what Load would only warn about, so a new task never starts blocked.
//
// # Order
//
// Subtasks run as units of their own with ids "<parent>.<sub>"; their
// parent is done when they all are. Units resolves dependencies into a unit
// graph and Next tells a dispatcher which units are ready and which are
// blocked by a dependency that failed.
//
// # Outcomes and the journal
//
// A unit's outcome (status, status_reason, retry_count, error_history,
// failed_at, parked_until) is one Outcome value, which Apply records in one step.
// During a run the dispatcher makes each outcome durable at once in a
// results journal (Journal, one fsynced line each) and saves the file
// less often; OpenJournal, ApplyJournal and SettleJournal bring the
// outcomes a killed run left there into the file.
//
// # Write-back and locking
//
// Apply and SetStatus change status, retry_count, error_history, failed_at,
// parked_until and status_reason, deriving a parent's status from its subtasks, and Save
// writes the file atomically (temporary file in the same directory, fsync,
// rename, fsync of the directory), so a reader sees the old file or the new
// one, never a mix. Save reads the file again first and, when the user
// edited it meanwhile, keeps their version and applies only statgraph's own
// fields to it (see Save). Reset and ResetFailed send failed or blocked
// tasks back to pending. Lock keeps two statgraph runs off one file.
package tasks
