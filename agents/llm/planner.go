package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// Plan is the planner's answer: what to change and how to check it.
type Plan struct {
	Summary      string   `json:"summary"`
	Steps        []string `json:"steps"`
	Files        []string `json:"files"`
	TestStrategy string   `json:"test_strategy"`
}

// TaskInfo is what the agents are told about a task, in the terms of
// tasks.json (TestStrategy is its testStrategy).
type TaskInfo struct {
	ID, Title, Description, Details, TestStrategy string
	// Lessons are notes learned from earlier tasks in the repository,
	// shown after the task's fields in the planner's and executor's
	// prompts only.
	Lessons []string
}

const plannerSystemPrompt = `You are the planner of an autonomous coding agent. Given a task and a view of the repository, write a short, concrete plan for another agent that will edit the files.

Answer with only one JSON object, no prose and no code fences, of exactly this shape:
{"summary": "one or two sentences", "steps": ["step 1", "step 2"], "files": ["path/relative/to/repo"], "test_strategy": "how to check the change"}

"steps" must not be empty. "files" lists the files to read or change (it may be empty). Keep the plan under 10 steps.`

// Plan asks the model for a [Plan] for task, given repoView (see [RepoView]).
// It accepts the JSON object with or without code fences around it. If the
// answer is not valid JSON or lacks summary, steps, files or test_strategy,
// the parse error goes back to the model for one repair round; if that
// answer fails too, the error matches [ErrInvalidPlan]. Errors from
// [Client.Chat] (including [ErrBudget]) are returned as they are, wrapped
// with the task id. Usage is the sum over the calls made, also on failure.
// With Config.JSONMode the calls ask for response_format json_object.
func (c *Client) Plan(ctx context.Context, task TaskInfo, repoView string, budget *Budget) (Plan, Usage, error) {
	var plan Plan
	answer, total, parseErr, err := c.askJSON(ctx, budget, jsonAsk{System: plannerSystemPrompt, User: plannerPrompt(task, repoView),
		Shape: `{"summary": ..., "steps": [...], "files": [...], "test_strategy": ...}`}, func(answer string) (err error) {
		plan, err = parsePlan(answer)
		return err
	})
	switch {
	case err != nil:
		return Plan{}, total, fmt.Errorf("planner: task %s: %w", task.ID, err)
	case parseErr == nil:
		return plan, total, nil
	}
	return Plan{}, total, fmt.Errorf("%w: task %s: model %s answered twice without a usable plan (%v); its last answer began %q: try a stronger model or enable JSON mode",
		ErrInvalidPlan, task.ID, c.cfg.Model, parseErr, head(answer, 200))
}

// plannerPrompt is the user message of the planner's first call.
func plannerPrompt(task TaskInfo, repoView string) string {
	var b strings.Builder
	writeTask(&b, task)
	writeLessons(&b, task)
	b.WriteString("\n## Repository\n")
	if repoView == "" {
		b.WriteString("(no view of the repository)\n")
	} else {
		b.WriteString(repoView)
		if !strings.HasSuffix(repoView, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// writeTask writes the task's non-empty fields as a Markdown section.
func writeTask(b *strings.Builder, task TaskInfo) {
	fmt.Fprintf(b, "## Task %s: %s\n", task.ID, task.Title)
	for _, f := range []struct{ name, text string }{
		{"Description", task.Description},
		{"Details", task.Details},
		{"Test strategy", task.TestStrategy},
	} {
		if t := strings.TrimSpace(f.text); t != "" {
			fmt.Fprintf(b, "\n%s:\n%s\n", f.name, t)
		}
	}
}

// writeLessons writes the task's lessons after its section. Only the
// planner's and the executor's prompts carry them: a reviewer or a judge
// weighs the change against the task, not against what earlier tasks
// learned.
func writeLessons(b *strings.Builder, task TaskInfo) {
	if len(task.Lessons) == 0 {
		return
	}
	b.WriteString("\nLessons from earlier tasks in this repository:\n")
	for _, l := range task.Lessons {
		fmt.Fprintf(b, "- %s\n", l)
	}
}

// parsePlan reads a plan from a model's answer: a JSON object, possibly
// inside a Markdown code fence or surrounded by prose. It returns an error
// saying what is wrong if the JSON does not parse or summary, steps, files
// or test_strategy is missing ("testStrategy" is accepted too), or if
// summary or steps is empty. Unknown fields are ignored.
func parsePlan(answer string) (Plan, error) {
	text := strings.TrimSpace(answer)
	if text == "" {
		return Plan{}, errors.New("the answer is empty")
	}
	start, end := strings.IndexByte(text, '{'), strings.LastIndexByte(text, '}')
	if start < 0 {
		return Plan{}, errors.New("the answer holds no JSON object")
	}
	if end < start {
		end = len(text) - 1 // a truncated object: let the decoder say what is missing
	}
	var raw struct {
		Summary         *string   `json:"summary"`
		Steps           *[]string `json:"steps"`
		Files           *[]string `json:"files"`
		TestStrategy    *string   `json:"test_strategy"`
		TestStrategyAlt *string   `json:"testStrategy"`
	}
	if err := json.Unmarshal([]byte(text[start:end+1]), &raw); err != nil {
		return Plan{}, fmt.Errorf("the JSON object does not parse: %v", err)
	}
	if raw.TestStrategy == nil {
		raw.TestStrategy = raw.TestStrategyAlt
	}
	var missing []string
	if raw.Summary == nil || strings.TrimSpace(*raw.Summary) == "" {
		missing = append(missing, "summary")
	}
	if raw.Steps == nil || len(*raw.Steps) == 0 {
		missing = append(missing, "steps")
	}
	if raw.Files == nil {
		missing = append(missing, "files")
	}
	if raw.TestStrategy == nil {
		missing = append(missing, "test_strategy")
	}
	if len(missing) > 0 {
		return Plan{}, fmt.Errorf("missing or empty field(s): %s", strings.Join(missing, ", "))
	}
	return Plan{Summary: *raw.Summary, Steps: *raw.Steps, Files: *raw.Files, TestStrategy: *raw.TestStrategy}, nil
}

// head returns at most n bytes of s, cut at a rune boundary, marking a cut
// with "…".
func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// chatRepair sends req and hands the answer to parse; when parse fails, the
// model gets the answer back with repair(parse error) and one more try. It
// returns the last answer, the usage of both calls, parse's last error, and
// the error of a call that failed.
func (c *Client) chatRepair(ctx context.Context, req openai.ChatCompletionRequest, budget *Budget,
	parse func(answer string) error, repair func(parseErr error) string) (answer string, total Usage, parseErr, err error) {
	for round := 1; round <= 2; round++ {
		resp, err := c.Chat(ctx, req, budget)
		if err != nil {
			return answer, total, parseErr, err
		}
		total = total.Plus(c.usageOf(req.Model, resp))
		answer = ""
		if len(resp.Choices) > 0 {
			answer = resp.Choices[0].Message.Content
		}
		if parseErr = parse(answer); parseErr == nil {
			return answer, total, nil, nil
		}
		req.Messages = append(req.Messages,
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: answer},
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: repair(parseErr)},
		)
	}
	return answer, total, parseErr, nil
}
