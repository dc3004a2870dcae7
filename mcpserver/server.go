package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statgraph/statgraph/control"
)

// instructions tell the assistant, once per session, how the tools fit
// together.
const instructions = `This server steers one statgraph plan (a tasks.json run through planner -> executor -> verifier with retries).
list_tasks and status show where the tasks are; get_task and history show a task's attempts, feedback and diff.
add_task appends a task (validated like tasks.json). run_pending starts a run of the pending tasks in the server's process and returns at once: poll status or get_task for progress, stop_run stops it gracefully.
A task with on_exhausted "ask" that used its retries waits for answer_escalation (retry, skip or abort); so does a plan waiting for approval (approve, edit or reject). reset_failed sends failed or blocked tasks back to pending.
land lands the done tasks on a branch, each merge checked; merge_queue shows where each stands. plan_from_spec, expand_task and analyze_complexity ask the model about the task list itself.`

// New returns an MCP server whose tools read and steer the plan ctl has
// open. version is reported to clients as the server's version. The server
// may be run over any transport (Server.Run with mcp.StdioTransport for
// `statgraph mcp`), by several sessions at once: every tool goes through
// ctl, which is safe for concurrent use.
func New(ctl *control.Control, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "statgraph", Title: "statgraph task runner", Version: version},
		&mcp.ServerOptions{Instructions: instructions})
	h := &handlers{ctl: ctl}
	ro := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
	no, yes := false, true
	// Adding a task, running the pending ones, answering a question and
	// sending a task back change the repository's branches or a task's
	// outcome, and start agents that reach model providers and run code:
	// destructive and open-world, so a client asks its user first.
	steer := &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes}
	// Picking a candidate and resetting failed tasks change a branch or an
	// outcome without starting anything.
	change := &mcp.ToolAnnotations{DestructiveHint: &yes, IdempotentHint: true, OpenWorldHint: &no}
	add(s, &mcp.Tool{Name: "list_tasks", Annotations: ro,
		Description: "List the plan's tasks (id, title, status, reason, dependencies, and the node and attempt of a running task), optionally only those with one status."},
		h.listTasks)
	add(s, &mcp.Tool{Name: "get_task", Annotations: ro,
		Description: "One task: its fields, every attempt with its verdict, errors and the feedback sent back, token use, and a summary of its diff."},
		h.getTask)
	add(s, &mcp.Tool{Name: "add_task", Annotations: steer,
		Description: "Append a task to tasks.json. The task is validated like the file (unique id, known dependencies, no cycle, known fields); on any problem nothing is written and the error lists each problem. Unknown fields are refused, the title is at most 1 KiB, other strings 256 KiB, the task 1 MiB; an executor \"env\" may name only the variables the server was started to pass (statgraph mcp --allow-env)."},
		h.addTask)
	add(s, &mcp.Tool{Name: "run_pending", Annotations: steer,
		Description: "Start a run of the pending tasks in the server's process and return at once. Progress: status, get_task. Refused while a run (this server's or a terminal's) holds the plan."},
		h.runPending)
	add(s, &mcp.Tool{Name: "stop_run", Annotations: &mcp.ToolAnnotations{DestructiveHint: &no, IdempotentHint: true, OpenWorldHint: &no},
		Description: "Stop the run run_pending (or the land land) started, gracefully: no task starts, running tasks stop at their next step and are left interrupted, to continue on the next run."},
		h.stopRun)
	add(s, &mcp.Tool{Name: "status", Annotations: ro,
		Description: "Counts of tasks by status, whether a run is going, and the running tasks with their node and attempt."},
		h.status)
	add(s, &mcp.Tool{Name: "history", Annotations: ro,
		Description: "One task's attempts from the run store: plan, each attempt's verdict, errors, feedback and commit, and the error history."},
		h.history)
	add(s, &mcp.Tool{Name: "answer_escalation", Annotations: steer,
		Description: "Answer a task that waits for a decision: one that used its retries (on_exhausted \"ask\"): retry, skip or abort; one whose plan waits for approval (approve_plan; the question's kind is approval and its proposal the plan): approve, edit with the edited plan as text, or reject with the reason as text. status shows which tasks wait and their question."},
		h.answer)
	add(s, &mcp.Tool{Name: "review_task", Annotations: steer,
		Description: "Send a done task back with review comments on lines of its diff: the comments (file, line, text) become the feedback of a new attempt, as failed checks' output does, and the task is pending again; run: true starts the run that makes it. Refused for a task that is not done."},
		h.review)
	add(s, &mcp.Tool{Name: "pick_candidate", Annotations: change,
		Description: "Make another candidate of a best-of-N task (tasks.json \"attempts\") its winner, as statgraph pick does: the task's branch moves to that candidate's commit; the old winner keeps its own branch. get_task's selection lists the candidates."},
		h.pickCandidate)
	add(s, &mcp.Tool{Name: "reset_failed", Annotations: change,
		Description: "Send failed or blocked tasks (all, or the ids given) back to pending, with the tasks blocked only by them, so the next run takes them up; their history stays."},
		h.resetFailed)
	addSpecTools(s, h)
	return s
}

// add adds tool t with handler h and the input and output schemas of In
// and Out.
func add[In, Out any](s *mcp.Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	t.InputSchema = inputSchema[In]()
	t.OutputSchema = outputSchema[Out]()
	mcp.AddTool(s, t, h)
}

// handlers holds the tools' implementations.
type handlers struct {
	ctl *control.Control
}

// Run serves ctl over stdin and stdout until the client disconnects or ctx
// ends, and returns why it stopped. Nothing else may write to stdout
// meanwhile: it carries the protocol.
func Run(ctx context.Context, ctl *control.Control, version string) error {
	return New(ctl, version).Run(ctx, &mcp.StdioTransport{})
}
