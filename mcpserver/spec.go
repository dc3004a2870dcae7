package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statgraph/statgraph/control"
)

// spec.go holds the tools of the merge queue (land, merge_queue) and of
// the task list written by the model (plan_from_spec, expand_task,
// analyze_complexity), each calling its one operation in control.

// LandInput names the branch land lands the done tasks on.
type LandInput struct {
	Onto string `json:"onto" jsonschema:"the branch to land the done tasks on, e.g. main; it must not be checked out in the repository"`
}

// MergeQueueInput has no arguments.
type MergeQueueInput struct{}

// PlanFromSpecInput carries the requirements document plan_from_spec
// writes tasks from.
type PlanFromSpecInput struct {
	Spec  string `json:"spec" jsonschema:"the requirements document (PRD) itself, as Markdown or text, at most 1 MiB"`
	Tag   string `json:"tag,omitempty" jsonschema:"the new tag to write the tasks into (default master); a tag the file has is refused"`
	Tasks int    `json:"tasks,omitempty" jsonschema:"about how many tasks to write (default: the model chooses)"`
}

// ExpandTaskInput names the task expand_task breaks into subtasks.
type ExpandTaskInput struct {
	ID  string `json:"id" jsonschema:"the pending task to break into subtasks"`
	Num int    `json:"num,omitempty" jsonschema:"about how many subtasks to add (default: the model chooses)"`
}

// AnalyzeComplexityInput has no arguments.
type AnalyzeComplexityInput struct{}

// Queues is merge_queue's result.
type Queues struct {
	Queues []control.LandQueue `json:"queues" jsonschema:"one per branch land ran onto: each done task landed, waiting or blocked, with the reason"`
	Run    control.RunInfo     `json:"run" jsonschema:"the server's run or land (onto is set for a land; an ended land's outcome is in landing)"`
}

// Expanded is expand_task's result.
type Expanded struct {
	ID       string   `json:"id"`
	Subtasks []string `json:"subtasks" jsonschema:"the new subtasks' ids"`
	Tokens   int      `json:"tokens"`
}

// Complexity is analyze_complexity's result.
type Complexity struct {
	Report control.ComplexityReport `json:"report"`
	Path   string                   `json:"path" jsonschema:"where the report was written (task-master's place for it)"`
	Tokens int                      `json:"tokens"`
}

func (h *handlers) land(ctx context.Context, _ *mcp.CallToolRequest, in LandInput) (*mcp.CallToolResult, RunState, error) {
	if err := h.ctl.StartLand(ctx, in.Onto); err != nil {
		return nil, RunState{}, h.explain(err)
	}
	return nil, RunState{RunInfo: h.ctl.Run(),
		Message: "the land is going on in the server's process: merge_queue shows each task landed, waiting or blocked with its reason, stop_run stops it"}, nil
}

func (h *handlers) mergeQueue(ctx context.Context, _ *mcp.CallToolRequest, _ MergeQueueInput) (*mcp.CallToolResult, Queues, error) {
	qs, err := h.ctl.LandQueues(ctx)
	if err != nil {
		return nil, Queues{}, h.explain(err)
	}
	return nil, Queues{Queues: qs, Run: h.ctl.Run()}, nil
}

func (h *handlers) planFromSpec(ctx context.Context, _ *mcp.CallToolRequest, in PlanFromSpecInput) (*mcp.CallToolResult, control.PlanResult, error) {
	res, err := h.ctl.PlanSpec(ctx, in.Spec, in.Tag, in.Tasks)
	if err != nil {
		return nil, control.PlanResult{}, h.explain(err)
	}
	return nil, res, nil
}

func (h *handlers) expandTask(ctx context.Context, _ *mcp.CallToolRequest, in ExpandTaskInput) (*mcp.CallToolResult, Expanded, error) {
	if err := checkID("id", in.ID); err != nil {
		return nil, Expanded{}, err
	}
	ids, tokens, err := h.ctl.Expand(ctx, in.ID, in.Num)
	if err != nil {
		return nil, Expanded{}, h.explain(err)
	}
	return nil, Expanded{ID: in.ID, Subtasks: ids, Tokens: tokens}, nil
}

func (h *handlers) analyzeComplexity(ctx context.Context, _ *mcp.CallToolRequest, _ AnalyzeComplexityInput) (*mcp.CallToolResult, Complexity, error) {
	path := h.ctl.ReportPath()
	r, tokens, err := h.ctl.Complexity(ctx, path)
	if err != nil {
		return nil, Complexity{}, h.explain(err)
	}
	return nil, Complexity{Report: r, Path: path, Tokens: tokens}, nil
}

// addSpecTools adds the tools of this file to s.
func addSpecTools(s *mcp.Server, h *handlers) {
	no, yes := false, true
	add(s, &mcp.Tool{Name: "land", Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &yes},
		Description: "Land the done tasks on a branch, one at a time, as statgraph land does: each task's branch is merged onto the branch's tip in a fresh workspace and its checks run there; the branch moves (fast-forward) only to a merge that passed. A conflict or a failing check goes to the task's agent as a new attempt. Returns at once; merge_queue shows the progress, stop_run stops it. Refused for a branch checked out in the repository."},
		h.land)
	add(s, &mcp.Tool{Name: "merge_queue", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		Description: "Where each done task stands in the merge queue of each branch land ran onto: landed, waiting, or blocked (on a conflict, on its checks, or otherwise) with the reason; and whether a land is going on."},
		h.mergeQueue)
	add(s, &mcp.Tool{Name: "plan_from_spec", Annotations: &mcp.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &yes},
		Description: "Write a task list from a requirements document (PRD), as statgraph plan does: the configured model writes the tasks (titles, descriptions, details, test strategy, dependencies, priorities), they are validated as tasks.json is, and written as a new tag of the tasks file without changing any other tag; nothing is written on any problem."},
		h.planFromSpec)
	add(s, &mcp.Tool{Name: "expand_task", Annotations: &mcp.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &yes},
		Description: "Break a pending task into subtasks written by the configured model, as statgraph expand does; the subtasks are validated and appended to the task, nothing is written on any problem."},
		h.expandTask)
	add(s, &mcp.Tool{Name: "analyze_complexity", Annotations: &mcp.ToolAnnotations{DestructiveHint: &no, OpenWorldHint: &yes},
		Description: "Score each pending task's complexity 1 to 10 with a recommended number of subtasks and the reasoning, as statgraph complexity does; writes task-master's complexity report and changes no task."},
		h.analyzeComplexity)
}
