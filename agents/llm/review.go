package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Review is a model's opinion of a change: whether it does what the task
// asks, and if not, what is wrong.
type Review struct {
	Approve  bool   `json:"approve"`
	Feedback string `json:"feedback"`
}

// maxReviewDiff caps the diff sent for review.
const maxReviewDiff = 24 << 10

const reviewSystemPrompt = `You review a change made by a coding agent. The tests and linters already passed; judge whether the change does what the task asks, without unrelated edits, hacks that only satisfy the tests, or obvious bugs. Answer with only a JSON object: {"approve": true|false, "feedback": "what is wrong and what to change, or why it is fine"}.`

// Review asks the model whether diff implements task. A diff larger than 24
// KiB is cut (head and tail) and the model is told so. One repair round is
// made when the answer is not the JSON asked for; after that Review returns
// an error wrapping ErrInvalidReview.
func (c *Client) Review(ctx context.Context, task TaskInfo, plan Plan, diff string, budget *Budget) (Review, Usage, error) {
	var b strings.Builder
	writeTask(&b, task)
	if plan.Summary != "" {
		fmt.Fprintf(&b, "\nPlan: %s\n", plan.Summary)
	}
	if len(diff) > maxReviewDiff {
		diff = diff[:maxReviewDiff/2] + fmt.Sprintf("\n… %d bytes of the diff left out …\n", len(diff)-maxReviewDiff) + diff[len(diff)-maxReviewDiff/2:]
	}
	fmt.Fprintf(&b, "\nThe change (unified diff):\n%s\n", diff)
	req := openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: reviewSystemPrompt},
		{Role: openai.ChatMessageRoleUser, Content: b.String()},
	}}
	if c.cfg.JSONMode {
		req.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
	}
	var r Review
	_, total, parseErr, err := c.chatRepair(ctx, req, budget, func(answer string) (err error) {
		r, err = parseReview(answer)
		return err
	}, func(parseErr error) string {
		return fmt.Sprintf(`Your answer could not be read: %v. Answer again with only {"approve": true|false, "feedback": "..."}.`, parseErr)
	})
	switch {
	case err != nil:
		return Review{}, total, fmt.Errorf("review: task %s: %w", task.ID, err)
	case parseErr == nil:
		return r, total, nil
	}
	return Review{}, total, fmt.Errorf("%w: task %s: model %s answered twice without a usable review (%v)", ErrInvalidReview, task.ID, c.cfg.Model, parseErr)
}

func parseReview(answer string) (Review, error) {
	text := strings.TrimSpace(answer)
	start, end := strings.IndexByte(text, '{'), strings.LastIndexByte(text, '}')
	if start < 0 || end < start {
		return Review{}, errors.New("the answer holds no JSON object")
	}
	var raw struct {
		Approve  *bool  `json:"approve"`
		Feedback string `json:"feedback"`
	}
	if err := json.Unmarshal([]byte(text[start:end+1]), &raw); err != nil {
		return Review{}, fmt.Errorf("the JSON object does not parse: %v", err)
	}
	if raw.Approve == nil {
		return Review{}, errors.New(`missing field "approve"`)
	}
	return Review{Approve: *raw.Approve, Feedback: strings.TrimSpace(raw.Feedback)}, nil
}
