package control

import "github.com/statgraph/statgraph/statgraph/gate"

// Poll runs one comparison of c's watcher: what it does every Poll
// interval and on every kick (Tasks, then an EventTask per changed unit).
func Poll(c *Control) { c.hub.compare() }

// AnswerInTwoSteps reads unit's pending question of a run in another
// process, as Answer does first, and returns the step Answer does next:
// placing answer, for a test to run after something else happened.
func AnswerInTwoSteps(c *Control, unit, answer string) (place func() error, err error) {
	q, err := pendingQuestion(c.plan, unit)
	if err != nil {
		return nil, err
	}
	return func() error { return placeAnswer(c.plan, unit, q, gate.Reply{Answer: gate.Answer(answer)}) }, nil
}
