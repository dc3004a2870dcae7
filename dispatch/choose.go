package dispatch

// choose.go chooses the winner among a best-of-N unit's candidates, by the
// order docs/tasks-json.md documents: only candidates whose blocking checks
// passed; among them the fewest advisory findings (warnings) of the last
// verification; then, when the task has a "judge", a model's tournament of
// pairs over the candidates' diffs; then the smallest diff (lines added and
// removed); then the lowest candidate number.

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/tasks"
)

// judgeFunc compares candidates a and b for the task and returns the
// number of the better one and the model's reasoning.
type judgeFunc func(ctx context.Context, a, b *candidate) (int, string, error)

// sortCandidates orders candidates by number.
func sortCandidates(cs []*candidate) {
	slices.SortFunc(cs, func(a, b *candidate) int { return cmp.Compare(a.K, b.K) })
}

// outright reports whether the finished candidates cs (of n) already hold
// a winner no running candidate can beat: with no judge, one that passed
// with no warnings (a later one could at best tie on warnings, and the
// smallest-diff rule applies among the candidates finished by then).
func outright(t tasks.Task, cs []*candidate, n int) bool {
	if len(cs) == n || (t.Judge != nil && t.Judge.On) {
		return false
	}
	for _, c := range cs {
		if c.Passed && c.Warnings == 0 {
			return true
		}
	}
	return false
}

// choose returns the winner among cs, the rule that decided it, and the
// judge's rounds; nil when no candidate passed. judge nil skips the
// judge; a round the judge could not play is recorded and decided by the
// rules after it.
func choose(ctx context.Context, t tasks.Task, cs []*candidate, judge judgeFunc) (*candidate, string, []agents.JudgeRound) {
	var pool []*candidate
	for _, c := range cs {
		if c.Passed {
			pool = append(pool, c)
		}
	}
	switch len(pool) {
	case 0:
		return nil, "", nil
	case 1:
		return pool[0], "only passing candidate", nil
	}
	least := slices.MinFunc(pool, func(a, b *candidate) int { return cmp.Compare(a.Warnings, b.Warnings) }).Warnings
	pool = slices.DeleteFunc(pool, func(c *candidate) bool { return c.Warnings > least })
	if len(pool) == 1 {
		return pool[0], "fewest warnings", nil
	}
	var rounds []agents.JudgeRound
	if judge != nil {
		w, played, ok := tournament(ctx, pool, judge)
		rounds = played
		if ok {
			return w, "judge", rounds
		}
	}
	return smallest(pool), "smallest diff", rounds
}

// tournament plays candidates in pairs (1 against 2, 3 against 4, ...; an
// odd one out goes through), round after round, until one is left. ok is
// false when a match could not be played: the caller decides by the next
// rule.
func tournament(ctx context.Context, pool []*candidate, judge judgeFunc) (*candidate, []agents.JudgeRound, bool) {
	var rounds []agents.JudgeRound
	for len(pool) > 1 {
		var next []*candidate
		for i := 0; i < len(pool); i += 2 {
			if i+1 == len(pool) {
				next = append(next, pool[i])
				continue
			}
			a, b := pool[i], pool[i+1]
			w, why, err := judge(ctx, a, b)
			if err != nil {
				rounds = append(rounds, agents.JudgeRound{A: a.K, B: b.K, Reasoning: "the judge could not decide: " + oneLine(err.Error())})
				return nil, rounds, false
			}
			rounds = append(rounds, agents.JudgeRound{A: a.K, B: b.K, Winner: w, Reasoning: why})
			if w == a.K {
				next = append(next, a)
			} else {
				next = append(next, b)
			}
		}
		pool = next
	}
	return pool[0], rounds, true
}

// smallest returns the candidate with the fewest diff lines, the lowest
// number among equals.
func smallest(pool []*candidate) *candidate {
	return slices.MinFunc(pool, func(a, b *candidate) int {
		return cmp.Or(cmp.Compare(a.DiffLines, b.DiffLines), cmp.Compare(a.K, b.K))
	})
}

// judge returns the task's judge, or nil when it has none. The judge is the
// task's model unless "judge" names one; its tokens count in budget.
func (d *Dispatcher) judge(t tasks.Task, budget *llm.Budget) (judgeFunc, error) {
	if t.Judge == nil || !t.Judge.On {
		return nil, nil
	}
	model := d.Model
	if t.Model != "" {
		model.Model = t.Model
	}
	if t.Judge.Model != "" {
		model.Model = t.Judge.Model
	}
	if model.Model == "" {
		return nil, fmt.Errorf("task %s asks for a judge (\"judge\": true) but no model is configured: pass --model NAME or set STATGRAPH_MODEL, or name the judge's model (\"judge\": \"NAME\")", t.ID)
	}
	client, err := llm.New(model)
	if err != nil {
		return nil, err
	}
	info := agents.Task{ID: t.ID, Title: t.Title, Description: t.Description, Details: t.Details, TestStrategy: t.TestStrategy}.Info()
	return func(ctx context.Context, a, b *candidate) (int, string, error) {
		v, _, err := client.Judge(ctx, info, a.diff, b.diff, budget)
		if err != nil {
			return 0, "", err
		}
		if v.Winner == "A" {
			return a.K, v.Reasoning, nil
		}
		return b.K, v.Reasoning, nil
	}, nil
}
