package agents

import (
	"time"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/statgraph/gate"
	"github.com/statgraph/statgraph/verifier"
)

// DefaultMaxRetries is TaskState.MaxRetries when the task gives none, and
// a task's max_retries when neither the task nor the defaults of tasks.json
// set it: the gate's default (one limit for the orchestrator and the
// library's gates; MaxRetries counts attempts, the first included).
const DefaultMaxRetries = gate.DefaultMaxAttempts

// Phases of a task, in TaskState.Phase.
const (
	PhasePlanning  = "planning"
	PhaseExecuting = "executing"
	PhaseVerify    = "verify"
	PhaseDone      = "done"
	PhaseFailed    = "failed"
	PhaseSkipped   = "skipped"
	PhaseCancelled = "cancelled" // the operator rejected the plan
)

// Task is what the agents are asked to do.
type Task struct {
	ID           string `json:"id"`
	Title        string `json:"title"`
	Description  string `json:"description,omitempty"`
	Details      string `json:"details,omitempty"`
	TestStrategy string `json:"test_strategy,omitempty"`
	// OnExhausted is "fail" (default) or "ask": when retries run out, ask
	// the operator (an interrupt with the choices retry, skip, abort).
	OnExhausted string `json:"on_exhausted,omitempty"`
	// ApprovePlan pauses the task after the planner until an operator
	// approves, edits or rejects the plan (NodeApprove).
	ApprovePlan bool `json:"approve_plan,omitempty"`
}

// Info returns the task in the terms of the llm package.
func (t Task) Info() llm.TaskInfo {
	return llm.TaskInfo{ID: t.ID, Title: t.Title, Description: t.Description, Details: t.Details, TestStrategy: t.TestStrategy}
}

// info returns the task in the terms of the llm package, with the lessons
// picked for it.
func (s TaskState) info() llm.TaskInfo {
	ti := s.Task.Info()
	ti.Lessons = s.Lessons
	return ti
}

// Plan is the planner's answer.
type Plan = llm.Plan

// Attempt records one executor attempt and its verification.
type Attempt struct {
	N          int    `json:"n"`
	Summary    string `json:"summary,omitempty"`
	Commit     string `json:"commit,omitempty"`
	Tree       string `json:"tree,omitempty"`
	NoProgress bool   `json:"no_progress,omitempty"`
	// Tokens is the task's tokens so far when the attempt ended (its
	// planner's and earlier attempts' included).
	Tokens int `json:"tokens,omitempty"`
	// Usage is what this attempt alone spent: its executor's model calls or
	// agent CLI run, and its review; Usage.CostUSD is its cost, known when
	// Usage.Unpriced is 0.
	Usage    llm.Usage `json:"usage,omitzero"`
	Passed   bool      `json:"passed"`
	Errors   []string  `json:"errors,omitempty"`
	Feedback string    `json:"feedback,omitempty"`
	Started  time.Time `json:"started"`
	Duration string    `json:"duration,omitempty"`
	// Log is the tail of the agent's output in this attempt (see
	// LogExecutor), at most MaxLogTail bytes, scrubbed of secrets.
	Log string `json:"log,omitempty"`
}

// TaskState is the state of the orchestrator graph for one task. It is
// saved in every checkpoint, so every field is JSON.
type TaskState struct {
	Task         Task                  `json:"task"`
	Plan         Plan                  `json:"plan"`
	Verification verifier.Verification `json:"verification"`
	// RetryCount counts verifications (note 002: incremented on every one).
	RetryCount int `json:"retry_count"`
	// MaxRetries bounds the verifications; zero means DefaultMaxRetries.
	MaxRetries   int        `json:"max_retries"`
	ErrorHistory []string   `json:"error_history,omitempty"`
	FailedAt     *time.Time `json:"failed_at,omitempty"`
	Phase        string     `json:"phase"`
	// Attempts holds one record per executor attempt.
	Attempts []Attempt `json:"attempts,omitempty"`
	// Tokens is the model tokens spent on the task so far.
	Tokens int `json:"tokens,omitempty"`
	// Usage is what the task spent so far, in tokens (Usage.Tokens() is
	// Tokens) and dollars (Usage.CostUSD, known when Usage.Unpriced is 0).
	Usage llm.Usage `json:"usage,omitzero"`
	// Warnings collects advisory check failures that did not block.
	Warnings []string `json:"warnings,omitempty"`
	// Decision is the operator's answer when the task escalated ("retry",
	// "skip" or "abort") or its plan was asked about ("approve", "edit" or
	// "reject").
	Decision string `json:"decision,omitempty"`
	// Cancelled is why the task was cancelled (Phase PhaseCancelled).
	Cancelled string `json:"cancelled,omitempty"`
	// Lessons are the notes learned from earlier tasks in the repository
	// that the planner node picked for this task (see Lessons); the
	// planner's and executor's prompts show them.
	Lessons []string `json:"lessons,omitempty"`
	// Selection, on a best-of-N task's own thread, records its candidates
	// and the choice among them; the rest of the state is the winner's.
	Selection *Selection `json:"selection,omitempty"`
}

// Spend returns Usage, or, for a state checkpointed before costs were
// counted (Tokens but no Usage), its Tokens with their cost unknown.
func (s TaskState) Spend() llm.Usage { return s.Usage.OrTokens(s.Tokens) }

// maxRetries returns MaxRetries or its default.
func (s TaskState) maxRetries() int {
	if s.MaxRetries <= 0 {
		return DefaultMaxRetries
	}
	return s.MaxRetries
}

// Policy is the task's retry policy, the one gates use (package
// statgraph/gate): MaxRetries attempts (it counts verifications, the first
// included), and on exhaustion an escalation when Task.OnExhausted is
// "ask", else failure.
func (s TaskState) Policy() gate.Policy {
	p := gate.Policy{MaxAttempts: s.maxRetries()}
	if s.Task.OnExhausted == "ask" {
		p.OnExhausted = gate.Ask
	}
	return p
}

// lastAttempt returns a pointer to the newest attempt record, or nil.
func (s *TaskState) lastAttempt() *Attempt {
	if len(s.Attempts) == 0 {
		return nil
	}
	return &s.Attempts[len(s.Attempts)-1]
}
