package agents

import (
	"context"
	"strings"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/verifier"
)

// LLMPlanner plans with a model: it sends the task and a compact view of
// the workspace (file tree with sizes) and asks for a JSON plan.
type LLMPlanner struct {
	Client  *llm.Client
	Workdir string      // the task's workspace
	Budget  *llm.Budget // nil means unlimited
}

// Plan asks the model for a plan.
func (p LLMPlanner) Plan(ctx context.Context, s TaskState) (Plan, error) {
	view, err := llm.RepoView(p.Workdir, 300)
	if err != nil {
		return Plan{}, err
	}
	plan, _, err := p.Client.Plan(ctx, s.info(), view, p.Budget)
	return plan, err
}

// LLMExecutor runs the model's tool-calling loop (list, read, search, write,
// replace, finish) on the workspace's confined file system.
type LLMExecutor struct {
	Client   *llm.Client
	FS       llm.FileSystem // e.g. (*workspace.Workspace).FS()
	Budget   *llm.Budget
	MaxTurns int // 0 means the llm package's default (30)
	// Limits caps each attempt (tool calls per turn, conversation kept,
	// bytes and files written); the zero value means the llm defaults.
	Limits llm.ExecLimits
}

// Execute runs one attempt.
func (e LLMExecutor) Execute(ctx context.Context, s TaskState) (string, error) {
	summary, _, err := e.ExecuteLog(ctx, s)
	return summary, err
}

// ExecuteLog is Execute that also returns the model's last reply (its
// text and tool calls, see llm.ExecResult.LastReply), also when the
// attempt failed part way.
func (e LLMExecutor) ExecuteLog(ctx context.Context, s TaskState) (summary, log string, err error) {
	req := execRequest(s, e.MaxTurns)
	req.ExecLimits = e.Limits
	res, err := e.Client.Execute(ctx, e.FS, req, e.Budget)
	if err != nil {
		return "", res.LastReply, err
	}
	return res.Summary, res.LastReply, nil
}

func execRequest(s TaskState, maxTurns int) llm.ExecRequest {
	return llm.ExecRequest{
		Task: s.info(), Plan: s.Plan,
		Attempt: s.RetryCount + 1, MaxAttempts: s.maxRetries(),
		Feedback: s.Verification.Feedback, MaxTurns: maxTurns,
	}
}

// ChecksVerifier runs the task's checks (tests, lint, ...) in the workspace
// and turns their results into a Verification with capped feedback.
type ChecksVerifier struct {
	Checks        []verifier.Check
	Workdir       string
	FeedbackBytes int // 0 means verifier.DefaultFeedbackBytes (8 KiB)
}

// Verify runs the checks. The Verification it returns has Feedback set
// when it failed, and no Checks: the checks' outputs are not part of the
// task state (every checkpoint would carry them); Feedback summarises them.
func (c ChecksVerifier) Verify(ctx context.Context, _ TaskState) (verifier.Verification, error) {
	v, err := verifier.Verify(ctx, c.Workdir, c.Checks)
	if err != nil {
		return verifier.Verification{}, err
	}
	if !v.Passed() {
		v.Feedback = v.RenderFeedback(c.FeedbackBytes)
	}
	v.Checks = nil
	return v, nil
}

// ReviewVerifier adds an advisory LLM review to another Verifier: when the
// checks pass, the model reads the attempt's diff against the task and, if
// it does not approve, its feedback becomes a warning. A review never
// blocks the task (the design keeps reviews advisory) and a review that
// cannot be had (model error, budget, unreadable answer) is a warning too,
// not a failure of the verification.
type ReviewVerifier struct {
	Checks    Verifier
	Client    *llm.Client
	Workspace interface {
		Diff(ctx context.Context) (string, error)
	}
	Budget *llm.Budget
}

// Verify runs the checks, then the review.
func (r ReviewVerifier) Verify(ctx context.Context, s TaskState) (verifier.Verification, error) {
	v, err := r.Checks.Verify(ctx, s)
	if err != nil || !v.Passed() {
		return v, err
	}
	diff, err := r.Workspace.Diff(ctx)
	if err != nil {
		return v, err
	}
	if strings.TrimSpace(diff) == "" {
		return v, nil
	}
	rev, _, err := r.Client.Review(ctx, s.info(), s.Plan, diff, r.Budget)
	switch {
	case err != nil && ctx.Err() != nil:
		return v, err
	case err != nil:
		v.Warnings = append(v.Warnings, "review: not done: "+err.Error())
	case !rev.Approve:
		v.Warnings = append(v.Warnings, "review: "+rev.Feedback)
	}
	return v, nil
}
