package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/statgraph/statgraph/statgraph"
)

// Reply is an operator's answer to an Escalation with the text some
// answers carry: the edited proposal for AnswerEdit, the reason for
// AnswerReject. In JSON it is {"answer": ..., "text": ...}, or just the
// answer as a string, which is how a resume value of the exhaustion
// question is usually given (statgraph.WithResume("retry")).
type Reply struct {
	Answer Answer `json:"answer"`
	Text   string `json:"text,omitempty"`
}

// UnmarshalJSON accepts a Reply object or a bare answer string.
func (r *Reply) UnmarshalJSON(b []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte(`"`)) {
		*r = Reply{}
		return json.Unmarshal(b, &r.Answer)
	}
	type plain Reply
	return json.Unmarshal(b, (*plain)(r))
}

// Kinds of Escalation, in Escalation.Kind.
const (
	// KindExhausted (the zero Kind) asks what to do with work that used
	// up its attempts: retry, skip or abort (Choices).
	KindExhausted = ""
	// KindApproval asks an operator to approve a proposal (a task's plan)
	// before the work goes on: approve, edit or reject (ApprovalChoices).
	KindApproval = "approval"
)

// Answers to a KindApproval Escalation, in the order ApprovalChoices lists
// them.
const (
	AnswerApprove Answer = "approve" // go on with the proposal as it is
	AnswerEdit    Answer = "edit"    // go on with Reply.Text in its place
	AnswerReject  Answer = "reject"  // end the work, Reply.Text saying why
)

// ApprovalChoices returns the answers a KindApproval Escalation accepts,
// in a new slice.
func ApprovalChoices() []string {
	return []string{string(AnswerApprove), string(AnswerEdit), string(AnswerReject)}
}

// ApprovalHint is Escalation.Hint of a KindApproval question.
const ApprovalHint = "approve goes on with the plan, edit goes on with the edited plan, reject cancels the task (give the reason)"

// Check reports whether r answers a question of kind: one of its choices,
// with the text AnswerEdit needs (AnswerReject's reason is optional). Its
// error wraps ErrUnknownAnswer and says what to answer.
func (r Reply) Check(kind string) error {
	if kind != KindApproval {
		_, err := ParseAnswer(string(r.Answer))
		return err
	}
	switch r.Answer {
	case AnswerApprove, AnswerReject:
		return nil
	case AnswerEdit:
		if r.Text == "" {
			return fmt.Errorf("%w: edit needs the edited plan as its text", ErrUnknownAnswer)
		}
		return nil
	}
	return fmt.Errorf("%w %q: answer approve, edit (with the edited plan) or reject (with the reason)", ErrUnknownAnswer, r.Answer)
}

// Approve raises e as a KindApproval question, with Hint and Choices
// filled in, as an interrupt (statgraph.Interrupt: the graph needs a
// checkpointer), and returns the operator's Reply once the run is resumed
// with one. check, when not nil, vets an AnswerEdit's text (e.g. that it
// parses as a plan); a reply it or Reply.Check refuses asks again with
// Invalid saying why, as does a resume with no value. Its error, the
// pause's or a resume value that is not a Reply, is for the node to
// return.
func (e Escalation) Approve(ctx context.Context, check func(text string) error) (Reply, error) {
	e.Kind, e.Hint, e.Choices = KindApproval, ApprovalHint, ApprovalChoices()
	for {
		r, err := statgraph.Interrupt[*Reply](ctx, e)
		if err != nil {
			return Reply{}, err
		}
		if r == nil {
			continue
		}
		err = r.Check(KindApproval)
		if err == nil && r.Answer == AnswerEdit && check != nil {
			err = check(r.Text)
		}
		if err == nil {
			return *r, nil
		}
		e.Invalid = err.Error()
	}
}
