package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// spec.go holds the three calls that write or judge a task list rather
// than code: tasks from a requirements document (statgraph plan), subtasks
// of one task (statgraph expand) and a complexity score per task
// (statgraph complexity), in task-master's terms. Each asks for a reply
// of a declared JSON schema (response_format json_schema, strict), so a
// server that supports it returns nothing else; the answer is checked
// here for its shape and bounds, and the caller checks the tasks as a
// tasks file (package tasks).

// Bounds on what a model may return for a task list. A reply over them is
// refused (after one repair round) rather than cut: a list cut short has
// dangling dependencies, and a hostile reply is refused whole.
const (
	MaxSpecTasks    = 100       // tasks in one plan
	MaxSpecSubtasks = 30        // subtasks added by one expand
	MaxSpecTitle    = 200       // bytes of a title (task-master's own cap)
	MaxSpecText     = 256 << 10 // bytes of any other string
)

// ErrInvalidSpec is returned (wrapped) when the model answered twice
// without a usable task list, subtask list or complexity analysis.
var ErrInvalidSpec = errors.New("llm: the model's answer is not a usable task list")

// SpecTask is one task the model wrote from a requirements document, in
// task-master's fields. Dependencies name other tasks of the same list by
// id.
type SpecTask struct {
	ID           int    `json:"id"`
	Title        string `json:"title"`
	Description  string `json:"description"`
	Details      string `json:"details"`
	TestStrategy string `json:"testStrategy"`
	Priority     string `json:"priority"` // "high", "medium" or "low"
	Dependencies []int  `json:"dependencies"`
}

// Complexity is the model's judgement of one task, in the fields of
// task-master's complexity report.
type Complexity struct {
	TaskID              string `json:"taskId"`
	Title               string `json:"taskTitle"`
	Score               int    `json:"complexityScore"` // 1 to 10
	RecommendedSubtasks int    `json:"recommendedSubtasks"`
	ExpansionPrompt     string `json:"expansionPrompt"`
	Reasoning           string `json:"reasoning"`
}

// specTaskSchema is the JSON schema of one task or subtask of a reply;
// priority is left out for subtasks.
func specTaskSchema(priority bool) map[string]any {
	props := map[string]any{
		"id":           map[string]any{"type": "integer", "minimum": 1},
		"title":        map[string]any{"type": "string"},
		"description":  map[string]any{"type": "string"},
		"details":      map[string]any{"type": "string"},
		"testStrategy": map[string]any{"type": "string"},
		"dependencies": map[string]any{"type": "array", "items": map[string]any{"type": "integer"}},
	}
	required := []string{"id", "title", "description", "details", "testStrategy", "dependencies"}
	if priority {
		props["priority"] = map[string]any{"type": "string", "enum": []string{"high", "medium", "low"}}
		required = append(required, "priority")
	}
	return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

// listSchema is the schema of a reply {key: [item...]}.
func listSchema(key string, item map[string]any) json.RawMessage {
	s, _ := json.Marshal(map[string]any{
		"type":                 "object",
		"properties":           map[string]any{key: map[string]any{"type": "array", "items": item}},
		"required":             []string{key},
		"additionalProperties": false,
	})
	return s
}

var complexitySchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"taskId":              map[string]any{"type": "string"},
		"taskTitle":           map[string]any{"type": "string"},
		"complexityScore":     map[string]any{"type": "integer", "minimum": 1, "maximum": 10},
		"recommendedSubtasks": map[string]any{"type": "integer", "minimum": 0},
		"expansionPrompt":     map[string]any{"type": "string"},
		"reasoning":           map[string]any{"type": "string"},
	},
	"required":             []string{"taskId", "taskTitle", "complexityScore", "recommendedSubtasks", "expansionPrompt", "reasoning"},
	"additionalProperties": false,
}

const specSystemPrompt = `You turn a product requirements document into a list of development tasks for autonomous coding agents. Each task is one reviewable change with a way to check it. Order tasks so that each depends only on tasks listed before it, and keep dependencies to what is really needed.

Answer with only one JSON object, no prose and no code fences, of this shape:
{"tasks": [{"id": 1, "title": "short imperative title", "description": "one or two sentences", "details": "how to implement it", "testStrategy": "how to check it", "priority": "high|medium|low", "dependencies": []}]}

Ids are 1, 2, 3, ... in order; "dependencies" lists ids of earlier tasks.`

const expandSystemPrompt = `You break one development task into subtasks for autonomous coding agents. Each subtask is one small, checkable change; together they do the whole task.

Answer with only one JSON object, no prose and no code fences, of this shape:
{"subtasks": [{"id": 1, "title": "short imperative title", "description": "one or two sentences", "details": "how to implement it", "testStrategy": "how to check it", "dependencies": []}]}

Ids are numbered from the first id given, in order; "dependencies" lists ids of earlier subtasks of this list.`

const complexitySystemPrompt = `You judge the complexity of development tasks for autonomous coding agents. For each task give a score from 1 (trivial) to 10 (very hard), the number of subtasks it should be broken into (0 when it should not be), a prompt to guide that breakdown, and your reasoning.

Answer with only one JSON object, no prose and no code fences, of this shape:
{"complexityAnalysis": [{"taskId": "the task's id", "taskTitle": "its title", "complexityScore": 5, "recommendedSubtasks": 3, "expansionPrompt": "...", "reasoning": "..."}]}

Give exactly one entry per task, in the order given.`

// SpecTasks asks the model for a task list implementing spec, a
// requirements document; n > 0 asks for about n tasks, 0 lets the model
// choose. The answer is checked for shape and bounds (ids 1 and up, each
// once; titles and descriptions not empty; at most MaxSpecTasks tasks;
// strings within MaxSpecTitle and MaxSpecText; a priority of high,
// medium or low); dependencies are left to the caller, which checks the
// list as a tasks file (unknown ids, cycles). A bad answer gets one
// repair round, and then the error wraps ErrInvalidSpec. Usage is the sum
// over the calls made.
func (c *Client) SpecTasks(ctx context.Context, spec string, n int, budget *Budget) ([]SpecTask, Usage, error) {
	var b strings.Builder
	if n > 0 {
		fmt.Fprintf(&b, "Write about %d tasks.\n\n", n)
	}
	fmt.Fprintf(&b, "## Requirements document\n\n%s\n", spec)
	var out []SpecTask
	usage, err := c.specCall(ctx, budget, "tasks", specSystemPrompt, b.String(), listSchema("tasks", specTaskSchema(true)), func(answer string) error {
		var raw struct {
			Tasks *[]SpecTask `json:"tasks"`
		}
		if err := decodeObject(answer, &raw); err != nil {
			return err
		}
		if raw.Tasks == nil {
			return errors.New(`missing field "tasks"`)
		}
		out = *raw.Tasks
		return checkSpecTasks(out, MaxSpecTasks, 1, true)
	})
	return out, usage, err
}

// Subtasks asks the model to break task into about n subtasks (0: the
// model chooses), numbered from firstID; siblings lists the titles of the
// subtasks the task has already, which the new ones must not repeat. The
// answer is checked as SpecTasks checks its list (at most
// MaxSpecSubtasks, no priority); Priority is "" in every element.
func (c *Client) Subtasks(ctx context.Context, task TaskInfo, n, firstID int, siblings []string, budget *Budget) ([]SpecTask, Usage, error) {
	var b strings.Builder
	if n > 0 {
		fmt.Fprintf(&b, "Write about %d subtasks, ", n)
	} else {
		b.WriteString("Write the subtasks, ")
	}
	fmt.Fprintf(&b, "with ids from %d.\n\n", firstID)
	writeTask(&b, task)
	if len(siblings) > 0 {
		b.WriteString("\nSubtasks it has already (do not repeat them):\n")
		for _, s := range siblings {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}
	var out []SpecTask
	usage, err := c.specCall(ctx, budget, "subtasks", expandSystemPrompt, b.String(), listSchema("subtasks", specTaskSchema(false)), func(answer string) error {
		var raw struct {
			Subtasks *[]SpecTask `json:"subtasks"`
		}
		if err := decodeObject(answer, &raw); err != nil {
			return err
		}
		if raw.Subtasks == nil {
			return errors.New(`missing field "subtasks"`)
		}
		out = *raw.Subtasks
		return checkSpecTasks(out, MaxSpecSubtasks, firstID, false)
	})
	return out, usage, err
}

// Complexity asks the model to score each of tasks. The answer must have
// exactly one entry per task, by id, with a score from 1 to 10 and a
// recommended number of subtasks from 0 to MaxSpecSubtasks; it is
// returned in the order of tasks, each with the task's own title.
func (c *Client) Complexity(ctx context.Context, tasks []TaskInfo, budget *Budget) ([]Complexity, Usage, error) {
	var b strings.Builder
	for _, t := range tasks {
		writeTask(&b, t)
		b.WriteByte('\n')
	}
	var out []Complexity
	usage, err := c.specCall(ctx, budget, "complexity analysis", complexitySystemPrompt, b.String(), listSchema("complexityAnalysis", complexitySchema), func(answer string) error {
		var raw struct {
			List *[]Complexity `json:"complexityAnalysis"`
		}
		if err := decodeObject(answer, &raw); err != nil {
			return err
		}
		if raw.List == nil {
			return errors.New(`missing field "complexityAnalysis"`)
		}
		byID := map[string]Complexity{}
		for i, e := range *raw.List {
			switch {
			case e.Score < 1 || e.Score > 10:
				return fmt.Errorf("complexityAnalysis[%d]: complexityScore %d is not from 1 to 10", i, e.Score)
			case e.RecommendedSubtasks < 0 || e.RecommendedSubtasks > MaxSpecSubtasks:
				return fmt.Errorf("complexityAnalysis[%d]: recommendedSubtasks %d is not from 0 to %d", i, e.RecommendedSubtasks, MaxSpecSubtasks)
			case len(e.ExpansionPrompt) > MaxSpecText || len(e.Reasoning) > MaxSpecText:
				return fmt.Errorf("complexityAnalysis[%d]: a text is over %d bytes", i, MaxSpecText)
			}
			if _, dup := byID[e.TaskID]; dup {
				return fmt.Errorf("complexityAnalysis[%d]: task %q appears twice", i, e.TaskID)
			}
			byID[e.TaskID] = e
		}
		out = out[:0]
		for _, t := range tasks {
			e, ok := byID[t.ID]
			if !ok {
				return fmt.Errorf("task %q has no entry", t.ID)
			}
			e.Title = t.Title
			out = append(out, e)
		}
		if len(byID) != len(tasks) {
			return fmt.Errorf("%d entries for %d tasks: an entry names a task that was not given", len(byID), len(tasks))
		}
		return nil
	})
	return out, usage, err
}

// specCall sends one request of the three above with the reply schema
// schema, parsing its answer with parse (askJSON: one repair round, and
// once more without the schema when a server refuses it).
func (c *Client) specCall(ctx context.Context, budget *Budget, what, system, user string, schema json.RawMessage, parse func(string) error) (Usage, error) {
	answer, total, parseErr, err := c.askJSON(ctx, budget, jsonAsk{System: system, User: user,
		Shape: "of the shape asked for", Name: strings.ReplaceAll(what, " ", "_"), Schema: schema}, parse)
	switch {
	case err != nil:
		return total, fmt.Errorf("%s: %w", what, err)
	case parseErr != nil:
		return total, fmt.Errorf("%w: model %s answered twice without a usable %s (%v); its last answer began %q: try a stronger model",
			ErrInvalidSpec, c.cfg.Model, what, parseErr, head(answer, 200))
	}
	return total, nil
}

// checkSpecTasks checks a task or subtask list: at most max entries, ids
// first, first+1, ... in order, texts within bounds, no more dependencies
// than there are ids, and a priority when withPriority (else it clears
// Priority).
func checkSpecTasks(list []SpecTask, max, first int, withPriority bool) error {
	switch {
	case len(list) == 0:
		return errors.New("the list is empty")
	case len(list) > max:
		return fmt.Errorf("%d entries; at most %d are accepted", len(list), max)
	}
	for i, t := range list {
		where := fmt.Sprintf("entry %d (id %d)", i+1, t.ID)
		switch {
		case t.ID != first+i:
			return fmt.Errorf("%s: want id %d: ids are %d, %d, ... in order", where, first+i, first, first+1)
		case strings.TrimSpace(t.Title) == "" || strings.TrimSpace(t.Description) == "":
			return fmt.Errorf(`%s: "title" and "description" must not be empty`, where)
		case len(t.Title) > MaxSpecTitle:
			return fmt.Errorf(`%s: "title" is %d bytes; at most %d`, where, len(t.Title), MaxSpecTitle)
		case len(t.Description) > MaxSpecText || len(t.Details) > MaxSpecText || len(t.TestStrategy) > MaxSpecText:
			return fmt.Errorf("%s: a text is over %d bytes", where, MaxSpecText)
		case withPriority && t.Priority != "high" && t.Priority != "medium" && t.Priority != "low":
			return fmt.Errorf(`%s: "priority" %q is not high, medium or low`, where, t.Priority)
		case !withPriority:
			list[i].Priority = ""
		}
		if len(t.Dependencies) > len(list)+first {
			return fmt.Errorf("%s: %d dependencies", where, len(t.Dependencies))
		}
	}
	return nil
}
