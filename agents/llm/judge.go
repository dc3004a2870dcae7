package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Verdict is a judge's choice between two changes made for one task.
type Verdict struct {
	// Winner is "A" or "B".
	Winner    string `json:"winner"`
	Reasoning string `json:"reasoning"`
}

const judgeSystemPrompt = `You compare two changes made by coding agents for the same task. Both pass the task's tests and linters. Choose the one that better does what the task asks: correct, complete, no unrelated edits, no hacks that only satisfy the tests, easier to maintain. Answer with only a JSON object: {"winner": "A"|"B", "reasoning": "why, in a few sentences"}.`

// Judge asks the model which of the diffs a and b better implements task.
// Each diff larger than 24 KiB is cut (head and tail). One repair round is
// made when the answer is not the JSON asked for; after that Judge returns
// an error wrapping ErrInvalidVerdict.
func (c *Client) Judge(ctx context.Context, task TaskInfo, a, b string, budget *Budget) (Verdict, Usage, error) {
	var sb strings.Builder
	writeTask(&sb, task)
	for _, d := range []struct{ name, diff string }{{"A", a}, {"B", b}} {
		diff := d.diff
		if len(diff) > maxReviewDiff {
			diff = diff[:maxReviewDiff/2] + fmt.Sprintf("\n… %d bytes of the diff left out …\n", len(diff)-maxReviewDiff) + diff[len(diff)-maxReviewDiff/2:]
		}
		fmt.Fprintf(&sb, "\nChange %s (unified diff):\n%s\n", d.name, diff)
	}
	req := openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: judgeSystemPrompt},
		{Role: openai.ChatMessageRoleUser, Content: sb.String()},
	}}
	if c.cfg.JSONMode {
		req.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
	}
	var v Verdict
	_, total, parseErr, err := c.chatRepair(ctx, req, budget, func(answer string) (err error) {
		v, err = parseVerdict(answer)
		return err
	}, func(parseErr error) string {
		return fmt.Sprintf(`Your answer could not be read: %v. Answer again with only {"winner": "A"|"B", "reasoning": "..."}.`, parseErr)
	})
	switch {
	case err != nil:
		return Verdict{}, total, fmt.Errorf("judge: task %s: %w", task.ID, err)
	case parseErr == nil:
		return v, total, nil
	}
	return Verdict{}, total, fmt.Errorf("%w: task %s: model %s answered twice without a usable verdict (%v)", ErrInvalidVerdict, task.ID, c.cfg.Model, parseErr)
}

func parseVerdict(answer string) (Verdict, error) {
	text := strings.TrimSpace(answer)
	start, end := strings.IndexByte(text, '{'), strings.LastIndexByte(text, '}')
	if start < 0 || end < start {
		return Verdict{}, errors.New("the answer holds no JSON object")
	}
	var v Verdict
	if err := json.Unmarshal([]byte(text[start:end+1]), &v); err != nil {
		return Verdict{}, fmt.Errorf("the JSON object does not parse: %v", err)
	}
	v.Winner = strings.ToUpper(strings.TrimSpace(v.Winner))
	if v.Winner != "A" && v.Winner != "B" {
		return Verdict{}, fmt.Errorf(`"winner" is %q; want "A" or "B"`, v.Winner)
	}
	v.Reasoning = strings.TrimSpace(v.Reasoning)
	return v, nil
}
