package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
	var r Review
	_, total, parseErr, err := c.askJSON(ctx, budget, jsonAsk{System: reviewSystemPrompt, User: b.String(),
		Shape: `{"approve": true|false, "feedback": "..."}`}, func(answer string) (err error) {
		r, err = parseReview(answer)
		return err
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
	var raw struct {
		Approve  *bool  `json:"approve"`
		Feedback string `json:"feedback"`
	}
	if err := decodeObject(answer, &raw); err != nil {
		return Review{}, err
	}
	if raw.Approve == nil {
		return Review{}, errors.New(`missing field "approve"`)
	}
	return Review{Approve: *raw.Approve, Feedback: strings.TrimSpace(raw.Feedback)}, nil
}
