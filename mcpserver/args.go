package mcpserver

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/internal/taskid"
	"github.com/statgraph/statgraph/statgraph/gate"
	"github.com/statgraph/statgraph/tasks"
)

// Tool inputs. The JSON schema each tool declares is inferred from these
// types (see inputSchema); the jsonschema tags are the descriptions the
// assistant reads.

// ListTasksInput filters list_tasks.
type ListTasksInput struct {
	Status string `json:"status,omitempty" jsonschema:"only the tasks with this status; leave it out to list every task"`
}

// GetTaskInput names the task get_task shows.
type GetTaskInput struct {
	ID   string `json:"id" jsonschema:"the task id as in tasks.json, e.g. 3 or 3.2 for a subtask"`
	Diff bool   `json:"diff,omitempty" jsonschema:"also return the task branch's whole diff (by default only the files changed and their line counts)"`
}

// HistoryInput names the task history shows.
type HistoryInput struct {
	ID    string `json:"id" jsonschema:"the task id as in tasks.json, e.g. 3 or 3.2 for a subtask"`
	Diffs bool   `json:"diffs,omitempty" jsonschema:"also return each attempt's diff and the branch's diff"`
}

// AddTaskInput carries the task to append to tasks.json.
type AddTaskInput struct {
	Task json.RawMessage `json:"task" jsonschema:"one task object as it appears in tasks.json: title, description, details, dependencies, test_cmd, executor, max_retries, on_exhausted, ...; without an id it gets the next free integer. It is validated like the file, and nothing is written when it is not valid"`
}

// RunPendingInput sets up the run run_pending starts.
type RunPendingInput struct {
	RetryFailed bool `json:"retry_failed,omitempty" jsonschema:"first send failed and blocked tasks back to pending, so they run again"`
}

// StopRunInput has no arguments.
type StopRunInput struct{}

// StatusInput has no arguments.
type StatusInput struct{}

// AnswerInput answers the question of a task waiting for one.
type AnswerInput struct {
	ID     string      `json:"id" jsonschema:"the id of the task waiting for an answer (status lists them)"`
	Answer gate.Answer `json:"answer" jsonschema:"a task out of attempts (question kind empty): retry runs it again with fresh attempts, skip marks it done with a warning, abort marks it failed; a plan to approve (question kind approval): approve goes on with the plan, edit with the plan given as text, reject cancels the task"`
	Text   string      `json:"text,omitempty" jsonschema:"for edit: the edited plan, as the question's proposal JSON (summary, steps, files, test_strategy) or as plain text; for reject: the reason"`
}

// ReviewInput sends a done task back with comments on its diff.
type ReviewInput struct {
	ID       string            `json:"id" jsonschema:"the id of a done task (get_task with diff: true shows its diff)"`
	Comments []control.Comment `json:"comments" jsonschema:"the comments: file (as the diff names it), line (in the new version of the file; end_line ends a range) and text (what to change)"`
	Run      bool              `json:"run,omitempty" jsonschema:"start a run at once to make the new attempt (as run_pending does)"`
}

// PickCandidateInput names the candidate of a best-of-N task to make its
// winner.
type PickCandidateInput struct {
	ID string `json:"id" jsonschema:"the best-of-N task"`
	K  int    `json:"k" jsonschema:"the candidate to make the winner (1 up; get_task's selection lists them); its checks must have passed"`
}

// ResetFailedInput names the tasks to send back to pending.
type ResetFailedInput struct {
	IDs []string `json:"ids,omitempty" jsonschema:"the failed or blocked tasks to send back to pending (with the tasks blocked only by them); leave it out to reset every failed or blocked task"`
}

// inputSchema infers In's schema and restricts the fields whose values
// come from a fixed list, so that the assistant sees the choices and the
// SDK refuses anything else before a tool runs: a status filter takes the
// statuses tasks.json knows, an answer the ones control accepts, and a
// task to add must be a JSON object.
func inputSchema[In any]() *jsonschema.Schema {
	s, err := jsonschema.For[In](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {Type: "object"},
	}})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %T: %v", *new(In), err))
	}
	enum := func(field string, values ...string) {
		if p := s.Properties[field]; p != nil {
			for _, v := range values {
				p.Enum = append(p.Enum, v)
			}
		}
	}
	switch any(*new(In)).(type) {
	case ListTasksInput:
		enum("status", tasks.Statuses()...)
	case AnswerInput:
		enum("answer", append(gate.Choices(), gate.ApprovalChoices()...)...)
	}
	return s
}

// outputSchema infers Out's schema as the SDK would, except that a
// json.RawMessage (a complexity report's taskId: a number or a string, as
// task-master writes it) may hold any JSON value, not only the array of
// bytes its Go type says.
func outputSchema[Out any]() *jsonschema.Schema {
	s, err := jsonschema.For[Out](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {},
	}})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %T: %v", *new(Out), err))
	}
	return s
}

// checkID refuses an id that cannot name a task: tasks.json validation
// applies the same rule, and ids become directory and branch names, so an
// id with "..", a slash or a NUL is refused here before anything looks it
// up.
func checkID(field, id string) error {
	if r := taskid.Reason(id); r != "" {
		return fmt.Errorf("%s %q is not a task id: %s; %s", field, id, r, taskid.Rule)
	}
	return nil
}
