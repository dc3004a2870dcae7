package llm

import (
	"context"
	"fmt"
	"strings"
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
	var v Verdict
	_, total, parseErr, err := c.askJSON(ctx, budget, jsonAsk{System: judgeSystemPrompt, User: sb.String(),
		Shape: `{"winner": "A"|"B", "reasoning": "..."}`}, func(answer string) (err error) {
		v, err = parseVerdict(answer)
		return err
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
	var v Verdict
	if err := decodeObject(answer, &v); err != nil {
		return Verdict{}, err
	}
	v.Winner = strings.ToUpper(strings.TrimSpace(v.Winner))
	if v.Winner != "A" && v.Winner != "B" {
		return Verdict{}, fmt.Errorf(`"winner" is %q; want "A" or "B"`, v.Winner)
	}
	v.Reasoning = strings.TrimSpace(v.Reasoning)
	return v, nil
}
