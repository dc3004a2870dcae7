package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/statgraph/gate"
	"github.com/statgraph/statgraph/tasks"
)

// Tool outputs. Each is an object, so that clients of every protocol
// version get structured content.

// TaskList is list_tasks' result.
type TaskList struct {
	Tasks []control.TaskInfo `json:"tasks" jsonschema:"the tasks in file order"`
}

// TaskDetail is get_task's result.
type TaskDetail struct {
	Task control.TaskInfo `json:"task"`
	// Ran is false for a task with no recorded run; the fields below are
	// then empty.
	Ran          bool              `json:"ran" jsonschema:"whether the task has a recorded run; attempts and diffs are empty when not"`
	Phase        string            `json:"phase,omitempty"`
	Tokens       int               `json:"tokens"`
	Usage        llm.Usage         `json:"usage" jsonschema:"the task's spend: input, cached input, output and total tokens, cost in US dollars"`
	CostUSD      *float64          `json:"cost_usd" jsonschema:"the task's cost in US dollars; null when unknown (a model without a price)"`
	Attempts     []AttemptSummary  `json:"attempts"`
	ErrorHistory []string          `json:"error_history"`
	Warnings     []string          `json:"warnings"`
	Decision     string            `json:"decision,omitempty" jsonschema:"the answer given to the task's escalation, if any"`
	Branch       string            `json:"branch,omitempty" jsonschema:"the git branch holding the task's work"`
	Changes      []FileChange      `json:"changes" jsonschema:"the files the branch changes against its base, with lines added and removed"`
	Diff         string            `json:"diff,omitempty" jsonschema:"the branch's whole diff, when asked for with diff: true"`
	Uncommitted  string            `json:"uncommitted,omitempty" jsonschema:"the work in the task's live workspace not committed yet, when asked for with diff: true"`
	Selection    *agents.Selection `json:"selection,omitempty" jsonschema:"for a best-of-N task (attempts): its candidates side by side, the winner and why, and the judge's rounds; the rest is the winner's"`
}

// AttemptSummary is one attempt of get_task: the attempt's record and a
// summary of its diff instead of the diff.
type AttemptSummary struct {
	N          int          `json:"n"`
	Passed     bool         `json:"passed"`
	Summary    string       `json:"summary,omitempty" jsonschema:"the agent's final message"`
	Errors     []string     `json:"errors" jsonschema:"the failing checks' output"`
	Feedback   string       `json:"feedback,omitempty" jsonschema:"what was sent back to the agent for the next attempt"`
	Log        string       `json:"log,omitempty" jsonschema:"the tail of the agent's output (an agent CLI's log, or the model's last reply)"`
	NoProgress bool         `json:"no_progress,omitempty"`
	Tokens     int          `json:"tokens" jsonschema:"the task's tokens when the attempt ended"`
	Usage      llm.Usage    `json:"usage" jsonschema:"what this attempt alone spent, tokens and cost"`
	CostUSD    *float64     `json:"cost_usd" jsonschema:"this attempt's cost in US dollars; null when unknown"`
	Commit     string       `json:"commit,omitempty"`
	Duration   string       `json:"duration,omitempty"`
	Changes    []FileChange `json:"changes" jsonschema:"the files this attempt's commit changed"`
}

// Added is add_task's result.
type Added struct {
	ID   string           `json:"id" jsonschema:"the new task's id (given, or the next free integer)"`
	Task control.TaskInfo `json:"task"`
}

// RunState is the result of run_pending and stop_run.
type RunState struct {
	control.RunInfo
	Message string `json:"message"`
}

// Status is status' result.
type Status struct {
	Counts  map[string]int     `json:"counts" jsonschema:"number of tasks per status"`
	Run     control.RunInfo    `json:"run" jsonschema:"whether this server's run is going on, or how its last run ended"`
	Running []control.TaskInfo `json:"running" jsonschema:"the tasks in progress, with their node and attempt"`
	Waiting []control.TaskInfo `json:"waiting" jsonschema:"the tasks waiting for answer_escalation, with their question"`
	Usage   llm.Usage          `json:"usage" jsonschema:"what the plan's tasks spent together, tokens and cost"`
	CostUSD *float64           `json:"cost_usd" jsonschema:"the plan's cost in US dollars; null when some of it is unknown (a model without a price)"`
	// Workers is set for a plan whose runs went to a queue (statgraph run --queue).
	Workers []control.WorkerInfo `json:"workers,omitempty" jsonschema:"the workers of the queue the plan's runs used (statgraph run --queue): alive or not, last seen, the tasks they hold with their run's limits"`
}

// Answered is answer_escalation's result.
type Answered struct {
	ID     string      `json:"id"`
	Answer gate.Answer `json:"answer"`
}

// Reviewed is review_task's result.
type Reviewed struct {
	ID       string `json:"id"`
	Comments int    `json:"comments" jsonschema:"the comments sent back"`
	Message  string `json:"message"`
}

// ResetDone is reset_failed's result.
type ResetDone struct {
	Reset []string `json:"reset" jsonschema:"the tasks sent back to pending, in file order"`
}

func (h *handlers) listTasks(ctx context.Context, _ *mcp.CallToolRequest, in ListTasksInput) (*mcp.CallToolResult, TaskList, error) {
	all, err := h.ctl.Tasks(ctx)
	if err != nil {
		return nil, TaskList{}, h.explain(err)
	}
	out := TaskList{Tasks: []control.TaskInfo{}}
	for _, t := range all {
		if in.Status == "" || t.Status == in.Status {
			out.Tasks = append(out.Tasks, t)
		}
	}
	return nil, out, nil
}

func (h *handlers) getTask(ctx context.Context, _ *mcp.CallToolRequest, in GetTaskInput) (*mcp.CallToolResult, TaskDetail, error) {
	t, err := h.task(ctx, in.ID)
	if err != nil {
		return nil, TaskDetail{}, err
	}
	d := TaskDetail{Task: t, Attempts: []AttemptSummary{}, ErrorHistory: []string{}, Warnings: []string{}, Changes: []FileChange{}}
	hist, err := h.ctl.History(ctx, in.ID, true)
	if errors.Is(err, control.ErrNoRun) {
		return nil, d, nil
	}
	if err != nil {
		return nil, TaskDetail{}, h.explain(err)
	}
	d.Ran, d.Phase, d.Tokens, d.Decision, d.Branch = true, hist.Phase, hist.Tokens, hist.Decision, hist.Branch
	d.Usage, d.CostUSD = hist.Usage, hist.CostUSD
	d.ErrorHistory, d.Warnings, d.Changes = hist.ErrorHistory, hist.Warnings, changes(hist.Diff)
	d.Selection = hist.Selection
	if in.Diff {
		d.Diff, d.Uncommitted = hist.Diff, hist.Uncommitted
	}
	for _, a := range hist.Attempts {
		s := AttemptSummary{N: a.N, Passed: a.Passed, Summary: a.Summary, Errors: a.Errors, Feedback: a.Feedback, Log: a.Log,
			NoProgress: a.NoProgress, Tokens: a.Tokens, Usage: a.Usage, CostUSD: a.Usage.KnownCost(), Commit: a.Commit, Duration: a.Duration, Changes: changes(a.Diff)}
		if s.Errors == nil {
			s.Errors = []string{}
		}
		d.Attempts = append(d.Attempts, s)
	}
	return nil, d, nil
}

func (h *handlers) history(ctx context.Context, _ *mcp.CallToolRequest, in HistoryInput) (*mcp.CallToolResult, control.History, error) {
	if err := checkID("id", in.ID); err != nil {
		return nil, control.History{}, err
	}
	hist, err := h.ctl.History(ctx, in.ID, in.Diffs)
	if errors.Is(err, control.ErrNoRun) {
		// Say whether the task exists at all.
		if _, terr := h.task(ctx, in.ID); terr != nil {
			return nil, control.History{}, terr
		}
		return nil, control.History{}, fmt.Errorf("task %s has not run yet, so it has no history; run_pending runs it", in.ID)
	}
	if err != nil {
		return nil, control.History{}, h.explain(err)
	}
	return nil, hist, nil
}

func (h *handlers) addTask(ctx context.Context, req *mcp.CallToolRequest, in AddTaskInput) (*mcp.CallToolResult, Added, error) {
	// The SDK hands in the arguments decoded and encoded again, which
	// sorts the object's members; the bytes as sent keep the order the
	// caller wrote, which tasks.json then shows. Both passed the schema.
	task := in.Task
	var sent AddTaskInput
	if req != nil && req.Params != nil && json.Unmarshal(req.Params.Arguments, &sent) == nil && len(sent.Task) > 0 {
		task = sent.Task
	}
	id, err := h.ctl.AddTask(task)
	if err != nil {
		return nil, Added{}, h.explain(err)
	}
	t, err := h.task(ctx, id)
	if err != nil {
		return nil, Added{}, err
	}
	return nil, Added{ID: id, Task: t}, nil
}

func (h *handlers) runPending(ctx context.Context, _ *mcp.CallToolRequest, in RunPendingInput) (*mcp.CallToolResult, RunState, error) {
	if err := h.ctl.Start(ctx, control.StartOptions{RetryFailed: in.RetryFailed}); err != nil {
		return nil, RunState{}, h.explain(err)
	}
	return nil, RunState{RunInfo: h.ctl.Run(),
		Message: "the run is going on in the server's process; status and get_task show its progress, stop_run stops it"}, nil
}

func (h *handlers) stopRun(ctx context.Context, _ *mcp.CallToolRequest, _ StopRunInput) (*mcp.CallToolResult, RunState, error) {
	if err := h.ctl.Stop(false); err != nil {
		return nil, RunState{}, h.explain(err)
	}
	if err := h.ctl.Wait(ctx); err != nil {
		return nil, RunState{}, fmt.Errorf("the run is stopping but had not ended when the call was cancelled: %w", err)
	}
	return nil, RunState{RunInfo: h.ctl.Run(),
		Message: "the run stopped: tasks that were running are left interrupted and continue on the next run_pending"}, nil
}

func (h *handlers) status(ctx context.Context, _ *mcp.CallToolRequest, _ StatusInput) (*mcp.CallToolResult, Status, error) {
	all, err := h.ctl.Tasks(ctx)
	if err != nil {
		return nil, Status{}, h.explain(err)
	}
	workers, err := h.ctl.Workers(ctx)
	if err != nil {
		return nil, Status{}, h.explain(err)
	}
	s := Status{Counts: map[string]int{}, Run: h.ctl.Run(), Running: []control.TaskInfo{}, Waiting: []control.TaskInfo{}, Workers: workers}
	for _, t := range all {
		s.Counts[t.Status]++
		if t.Question != nil {
			s.Waiting = append(s.Waiting, t)
		} else if t.Status == tasks.StatusInProgress {
			s.Running = append(s.Running, t)
		}
	}
	s.Usage = control.TotalUsage(all)
	s.CostUSD = s.Usage.KnownCost()
	return nil, s, nil
}

func (h *handlers) answer(ctx context.Context, _ *mcp.CallToolRequest, in AnswerInput) (*mcp.CallToolResult, Answered, error) {
	if err := checkID("id", in.ID); err != nil {
		return nil, Answered{}, err
	}
	if err := h.ctl.Reply(in.ID, gate.Reply{Answer: in.Answer, Text: in.Text}); err != nil {
		if errors.Is(err, control.ErrNoQuestion) {
			if _, terr := h.task(ctx, in.ID); terr != nil {
				return nil, Answered{}, terr
			}
			return nil, Answered{}, fmt.Errorf("task %s is not waiting for an answer (it was answered already, or the run that asked ended; a task asks again when run_pending reaches it); status lists the tasks that wait", in.ID)
		}
		return nil, Answered{}, h.explain(err)
	}
	return nil, Answered{ID: in.ID, Answer: in.Answer}, nil
}

func (h *handlers) review(ctx context.Context, _ *mcp.CallToolRequest, in ReviewInput) (*mcp.CallToolResult, Reviewed, error) {
	if err := checkID("id", in.ID); err != nil {
		return nil, Reviewed{}, err
	}
	if err := h.ctl.Review(ctx, in.ID, in.Comments); err != nil {
		return nil, Reviewed{}, h.explain(err)
	}
	out := Reviewed{ID: in.ID, Comments: len(in.Comments),
		Message: "the task is pending again with the comments as its feedback; run_pending makes the new attempt"}
	if in.Run {
		if err := h.ctl.Start(ctx, control.StartOptions{}); err != nil {
			return nil, Reviewed{}, fmt.Errorf("task %s was sent back, but the run to make its new attempt did not start: %w", in.ID, h.explain(err))
		}
		out.Message = "the task was sent back and a run makes its new attempt; status and get_task show its progress"
	}
	return nil, out, nil
}

func (h *handlers) pickCandidate(ctx context.Context, _ *mcp.CallToolRequest, in PickCandidateInput) (*mcp.CallToolResult, agents.Selection, error) {
	if err := checkID("id", in.ID); err != nil {
		return nil, agents.Selection{}, err
	}
	sel, err := h.ctl.Pick(ctx, in.ID, in.K)
	if err != nil {
		return nil, agents.Selection{}, h.explain(err)
	}
	return nil, sel, nil
}

func (h *handlers) resetFailed(ctx context.Context, _ *mcp.CallToolRequest, in ResetFailedInput) (*mcp.CallToolResult, ResetDone, error) {
	for i, id := range in.IDs {
		if err := checkID(fmt.Sprintf("ids[%d]", i), id); err != nil {
			return nil, ResetDone{}, err
		}
	}
	done, err := h.ctl.Reset(in.IDs...)
	if err != nil {
		return nil, ResetDone{}, h.explain(err)
	}
	if done == nil {
		done = []string{}
	}
	return nil, ResetDone{Reset: done}, nil
}

// task returns the task with id, or an error saying it is not in the plan.
func (h *handlers) task(ctx context.Context, id string) (control.TaskInfo, error) {
	if err := checkID("id", id); err != nil {
		return control.TaskInfo{}, err
	}
	all, err := h.ctl.Tasks(ctx)
	if err != nil {
		return control.TaskInfo{}, h.explain(err)
	}
	for _, t := range all {
		if t.ID == id {
			return t, nil
		}
	}
	return control.TaskInfo{}, fmt.Errorf("task %s is not in %s; list_tasks shows the ids", id, h.ctl.File())
}

// mcpWords are the tools' names for the operations control's advice
// points to.
var mcpWords = control.Words{List: "list_tasks", Progress: "status", Stop: "stop_run"}

// explain adds to an error of control what the assistant can do about it
// (control.Classify's advice) and the error's kind, as "(kind: conflict)"
// at the end, leaving its message as it is.
func (h *handlers) explain(err error) error {
	kind, advice := control.Classify(err, mcpWords)
	var ve *tasks.ValidationError
	switch {
	case errors.As(err, &ve):
		err = fmt.Errorf("the task was not added, nothing was written; %s would have these problems:\n%s", h.ctl.File(), ve.Error())
	case advice != "":
		err = fmt.Errorf("%w; %s", err, advice)
	}
	return fmt.Errorf("%w (kind: %s)", err, kind)
}

// FileChange is one file of a diff with the lines it adds and removes.
type FileChange struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
}

// changes summarises a unified git diff file by file.
func changes(diff string) []FileChange {
	out := []FileChange{}
	var cur *FileChange
	inHunk := false
	for line := range strings.Lines(diff) {
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "diff --git "):
			path := line[len("diff --git "):]
			if i := strings.LastIndex(path, ` "b/`); i >= 0 && strings.HasSuffix(path, `"`) {
				// A name git quotes (core.quotePath): "b/ctl\001name".
				if p, err := strconv.Unquote(path[i+1:]); err == nil {
					path = p[2:]
				}
			} else if i := strings.LastIndex(path, " b/"); i >= 0 {
				path = path[i+3:]
			}
			out = append(out, FileChange{Path: path})
			cur, inHunk = &out[len(out)-1], false
		case cur == nil:
		case strings.HasPrefix(line, "@@"):
			inHunk = true
		case !inHunk:
		case strings.HasPrefix(line, "+"):
			cur.Added++
		case strings.HasPrefix(line, "-"):
			cur.Removed++
		}
	}
	return out
}
