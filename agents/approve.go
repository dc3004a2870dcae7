package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/statgraph/statgraph/statgraph/gate"
)

// NodeApprove is the node that asks an operator to approve the plan of a
// task with Task.ApprovePlan (see Build).
const NodeApprove = "approve"

// Routes after the planner and the approve node.
const (
	RouteExecute = "execute" // go on to the executor
	RouteApprove = "approve" // ask for the plan's approval first
	RouteCancel  = "cancel"  // the plan was rejected: the task ends
)

// afterPlan sends a task whose plan needs approval to NodeApprove.
func afterPlan(_ context.Context, s TaskState) string {
	if s.Task.ApprovePlan {
		return RouteApprove
	}
	return RouteExecute
}

// afterApprove ends a task whose plan was rejected.
func afterApprove(_ context.Context, s TaskState) string {
	if s.Phase == PhaseCancelled {
		return RouteCancel
	}
	return RouteExecute
}

// approve is NodeApprove: it asks the operator about the plan (an
// Escalation of kind gate.KindApproval, the plan as indented JSON in its
// Proposal) and goes on with it (approve), with the edited one (edit, see
// ParsePlan) or cancels the task with the reason (reject). The question is
// an interrupt, checkpointed: a killed or stopped run asks it again when
// resumed, without planning again.
func (o *orchestrator) approve(ctx context.Context, s TaskState) (TaskState, error) {
	proposal, _ := json.MarshalIndent(s.Plan, "", "  ")
	r, err := Escalation{Task: s.Task.ID, Title: s.Task.Title, Proposal: string(proposal)}.Approve(ctx, func(text string) error {
		_, err := ParsePlan(text)
		return err
	})
	if err != nil {
		return s, err
	}
	s.Decision = string(r.Answer)
	switch r.Answer {
	case gate.AnswerEdit:
		s.Plan, _ = ParsePlan(r.Text)
		fmt.Fprintf(o.cfg.Log, "task %s: plan edited by the operator\n", s.Task.ID)
	case gate.AnswerReject:
		reason := strings.TrimSpace(r.Text)
		if reason == "" {
			reason = "no reason given"
		}
		s.Phase, s.Cancelled = PhaseCancelled, "plan rejected by the operator: "+reason
		s.ErrorHistory = append(slices.Clip(s.ErrorHistory), s.Cancelled)
		fmt.Fprintf(o.cfg.Log, "task %s cancelled: %s\n", s.Task.ID, s.Cancelled)
	}
	return s, nil
}

// ParsePlan reads an operator's edited plan: a JSON object of the Plan's
// fields (summary, steps, files, test_strategy), or plain text, which
// becomes the plan's summary. Text that starts with "{" but is not such an
// object, and empty text, are refused with an error saying why.
func ParsePlan(text string) (Plan, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return Plan{}, errors.New("the edited plan is empty: give the plan as JSON or as text")
	}
	if !strings.HasPrefix(text, "{") {
		return Plan{Summary: text}, nil
	}
	var p Plan
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Plan{}, fmt.Errorf("the edited plan is not a plan object ({\"summary\", \"steps\", \"files\", \"test_strategy\"}): %v", err)
	}
	if p.Summary == "" && len(p.Steps) == 0 {
		return Plan{}, errors.New("the edited plan has neither a summary nor steps")
	}
	return p, nil
}
