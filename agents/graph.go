package agents

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/internal/secret"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/gate"
	"github.com/statgraph/statgraph/verifier"
)

// Node names of the orchestrator graph.
const (
	NodePlanner  = "planner"
	NodeExecutor = "executor"
	NodeVerifier = "verifier"
	NodeFailed   = "failed"
)

// Routes of should_retry_or_end.
const (
	RouteRetry  = "retry"
	RouteDone   = "done"
	RouteFailed = "failed"
)

// Planner writes the plan for a task.
type Planner interface {
	Plan(ctx context.Context, s TaskState) (Plan, error)
}

// Executor makes one attempt at the task in its workspace and returns a
// one-line summary of what it did. The attempt number is s.RetryCount+1 and
// the feedback from the previous verification is s.Verification.Feedback.
type Executor interface {
	Execute(ctx context.Context, s TaskState) (summary string, err error)
}

// ExecutorFunc adapts a function to Executor.
type ExecutorFunc func(ctx context.Context, s TaskState) (string, error)

// Execute calls f.
func (f ExecutorFunc) Execute(ctx context.Context, s TaskState) (string, error) { return f(ctx, s) }

// Verifier checks the workspace after an attempt.
type Verifier interface {
	Verify(ctx context.Context, s TaskState) (verifier.Verification, error)
}

// VerifierFunc adapts a function to Verifier.
type VerifierFunc func(ctx context.Context, s TaskState) (verifier.Verification, error)

// Verify calls f.
func (f VerifierFunc) Verify(ctx context.Context, s TaskState) (verifier.Verification, error) {
	return f(ctx, s)
}

// Config holds what the orchestrator graph runs with. Executor and Verifier
// are required.
type Config struct {
	// Planner writes the plan; nil means no planning step output (an empty
	// plan; the planner node still runs so the graph keeps its shape).
	Planner  Planner
	Executor Executor
	Verifier Verifier
	// Workspace, when set, gets one commit per attempt, and its tree hash
	// tells an attempt that changed nothing ("no progress").
	Workspace *workspace.Workspace
	// Budget, when set, is read after each agent call into TaskState.Tokens
	// and Usage, and the usages it refused go to TaskState.Warnings.
	Budget *llm.Budget
	// Log receives progress lines such as "task 3 FAILED after 3 attempts";
	// nil discards them.
	Log io.Writer
	// Name, when set, names a run that is not the task's own in the failed
	// node's line, which then reads "<Name> failed after N attempts" (e.g.
	// "task 3: candidate 2", "task 3: landing on main"): the task itself
	// has not failed. "" prints "task <id> FAILED after N attempts".
	Name string
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// LessonNamespace, with a graph compiled WithStore, is where the
	// orchestrator keeps and reads the repository's lessons (see
	// Lessons; LessonNamespace(repo)); nil keeps none.
	LessonNamespace []string
	// CheckNames are the names of the task's checks ("tests", "lint",
	// ...), which make a lesson about a check relevant to the task.
	CheckNames []string
}

// Escalation is the payload of the interrupt raised when a task with
// on_exhausted "ask" runs out of retries: the gate's (package
// statgraph/gate), with Task, Title, Attempts and Errors set, asked with
// its Ask as a gate asks. Answer it with WithResume and one of Choices; any
// other answer asks again, with Invalid saying why.
type Escalation = gate.Escalation

// ShouldRetryOrEnd is the router after the verifier (note 002): "done" when
// tests and lint passed, "failed" when RetryCount >= MaxRetries, "retry"
// otherwise. It decides with the task's gate.Policy (TaskState.Policy), the
// one the library's gates use: RetryCount is the number of attempts made.
func ShouldRetryOrEnd(_ context.Context, s TaskState) string {
	switch s.Policy().Decide(s.Verification.Passed(), s.RetryCount, s.RetryCount) {
	case gate.Passed:
		return RouteDone
	case gate.Retry:
		return RouteRetry
	}
	return RouteFailed // gate.Failed, or gate.Escalate: the failed node asks
}

// Build returns the orchestrator graph's builder:
//
//	Start -> planner -> executor -> verifier -> should_retry_or_end
//	  retry -> executor, done -> End, failed -> failed -> End
//
// (and failed -> executor when an escalated task is answered "retry";
// planner -> approve -> executor, or End when the plan is rejected, for a
// task with Task.ApprovePlan).
// Every node's returned state and error are scrubbed of secrets and their
// encodings (package internal/secret) before the graph checkpoints them.
func Build(cfg Config) *statgraph.Builder[TaskState] {
	o := &orchestrator{cfg: cfg}
	if o.cfg.Now == nil {
		o.cfg.Now = time.Now
	}
	if o.cfg.Log == nil {
		o.cfg.Log = io.Discard
	}
	return statgraph.New[TaskState]().
		AddNode(NodePlanner, scrubbing(o.plan)).
		AddNode(NodeApprove, scrubbing(o.approve)).
		AddNode(NodeExecutor, scrubbing(o.execute)).
		AddNode(NodeVerifier, scrubbing(o.verify)).
		AddNode(NodeFailed, scrubbing(o.failed)).
		AddEdge(statgraph.Start, NodePlanner).
		AddConditionalEdges(NodePlanner, afterPlan, map[string]string{
			RouteExecute: NodeExecutor, RouteApprove: NodeApprove,
		}).
		AddConditionalEdges(NodeApprove, afterApprove, map[string]string{
			RouteExecute: NodeExecutor, RouteCancel: statgraph.End,
		}).
		AddEdge(NodeExecutor, NodeVerifier).
		AddConditionalEdges(NodeVerifier, ShouldRetryOrEnd, map[string]string{
			RouteRetry: NodeExecutor, RouteDone: statgraph.End, RouteFailed: NodeFailed,
		}).
		AddConditionalEdges(NodeFailed, afterFailed, map[string]string{
			RouteRetry: NodeExecutor, "end": statgraph.End,
		})
}

// NewGraph compiles the orchestrator graph. It fails if cfg lacks an
// Executor or a Verifier.
func NewGraph(cfg Config, opts ...statgraph.CompileOption) (*statgraph.Graph[TaskState], error) {
	if cfg.Executor == nil || cfg.Verifier == nil {
		return nil, fmt.Errorf("agents: the orchestrator needs an Executor and a Verifier")
	}
	return Build(cfg).Compile(opts...)
}

type orchestrator struct{ cfg Config }

// tokens reads the task's spend from its budget into s, and the usages
// the budget refused into s.Warnings (and Log). It returns what was spent
// since s was last read.
func (o *orchestrator) tokens(s *TaskState) llm.Usage {
	if o.cfg.Budget == nil {
		return llm.Usage{}
	}
	before := s.Usage
	s.Usage = o.cfg.Budget.Total()
	s.Tokens = s.Usage.Tokens()
	for _, w := range o.cfg.Budget.TakeWarnings() {
		s.Warnings = append(slices.Clip(s.Warnings), w)
		fmt.Fprintf(o.cfg.Log, "task %s warning: %s\n", s.Task.ID, w)
	}
	return s.Usage.Sub(before)
}

func (o *orchestrator) plan(ctx context.Context, s TaskState) (TaskState, error) {
	s.Phase = PhasePlanning
	if s.MaxRetries <= 0 {
		s.MaxRetries = DefaultMaxRetries
	}
	lessons, err := o.pickLessons(ctx, s)
	if err != nil {
		return s, fmt.Errorf("plan task %s: %w", s.Task.ID, err)
	}
	s.Lessons = lessons
	if o.cfg.Planner == nil {
		return s, nil
	}
	p, err := o.cfg.Planner.Plan(ctx, s)
	o.tokens(&s)
	if err != nil {
		return s, fmt.Errorf("plan task %s: %w", s.Task.ID, err)
	}
	s.Plan = p
	return s, nil
}

func (o *orchestrator) execute(ctx context.Context, s TaskState) (TaskState, error) {
	// n numbers attempts over the whole task, also across an operator's
	// retry (which resets RetryCount), so commits stay distinct.
	n := len(s.Attempts) + 1
	s.Phase, s.Decision = PhaseExecuting, ""
	started := o.cfg.Now()
	summary, log, err := executeLogged(ctx, o.cfg.Executor, s)
	spent := o.tokens(&s)
	if err != nil {
		return s, fmt.Errorf("task %s attempt %d: executor: %w", s.Task.ID, n, err)
	}
	a := Attempt{N: n, Summary: summary, Log: log, Started: started.UTC(), Usage: spent}
	if ws := o.cfg.Workspace; ws != nil {
		hash, changed, err := ws.Commit(ctx, n, firstLine(summary))
		if err != nil {
			return s, fmt.Errorf("task %s attempt %d: commit: %w", s.Task.ID, n, err)
		}
		tree, err := ws.TreeHash()
		if err != nil {
			return s, fmt.Errorf("task %s attempt %d: tree hash: %w", s.Task.ID, n, err)
		}
		a.Commit, a.Tree = hash, tree
		if paths := ws.Scrubbed(); len(paths) > 0 {
			w := fmt.Sprintf("attempt %d: a secret was replaced by %s in %s before committing", n, secret.Marker, strings.Join(paths, ", "))
			s.Warnings = append(slices.Clip(s.Warnings), w)
			fmt.Fprintf(o.cfg.Log, "task %s warning: %s\n", s.Task.ID, w)
		}
		if prev := s.lastAttempt(); prev != nil {
			a.NoProgress = prev.Tree == tree
		} else {
			a.NoProgress = !changed
		}
	}
	a.Duration = o.cfg.Now().Sub(started).Round(time.Millisecond).String()
	a.Tokens = s.Tokens
	s.Attempts = append(slices.Clip(s.Attempts), a)
	return s, nil
}

const noProgress = "no progress: the attempt changed nothing in the workspace"

func (o *orchestrator) verify(ctx context.Context, s TaskState) (TaskState, error) {
	s.Phase = PhaseVerify
	v, err := o.cfg.Verifier.Verify(ctx, s)
	spent := o.tokens(&s) // a review's model calls
	if err != nil {
		return s, fmt.Errorf("task %s: verifier: %w", s.Task.ID, err)
	}
	passed := v.Passed()
	errs := v.Errors
	if a := s.lastAttempt(); a != nil && a.NoProgress && !passed {
		errs = append([]string{noProgress}, errs...)
		v.Feedback = noProgress + ". Make a change this time.\n\n" + v.Feedback
	}
	if !passed {
		if len(errs) == 0 {
			errs = []string{"verification failed"}
		}
		s.ErrorHistory = append(slices.Clip(s.ErrorHistory), fmt.Sprintf("Retry %d: %s", s.RetryCount, strings.Join(errs, ", ")))
	}
	s.RetryCount++
	s.Verification = v
	if len(v.Warnings) > 0 {
		s.Warnings = append(slices.Clip(s.Warnings), v.Warnings...)
	}
	if len(s.Attempts) > 0 {
		s.Attempts = slices.Clone(s.Attempts)
		a := &s.Attempts[len(s.Attempts)-1]
		a.Passed, a.Errors, a.Feedback = passed, errs, v.Feedback
		a.Usage, a.Tokens = a.Usage.Plus(spent), s.Tokens
	}
	o.learn(ctx, &s, v)
	if passed {
		s.Phase = PhaseDone
	}
	return s, nil
}

func (o *orchestrator) failed(ctx context.Context, s TaskState) (TaskState, error) {
	if s.Policy().Decide(false, s.RetryCount, s.RetryCount) == gate.Escalate {
		var last []string
		if a := s.lastAttempt(); a != nil {
			last = a.Errors
		}
		answer, err := Escalation{Task: s.Task.ID, Title: s.Task.Title, Attempts: s.RetryCount, Errors: last}.Ask(ctx)
		if err != nil {
			return s, err
		}
		s.Decision = string(answer)
		switch answer {
		case gate.AnswerRetry:
			s.ErrorHistory = append(slices.Clip(s.ErrorHistory), fmt.Sprintf("reset by operator after %d attempts", s.RetryCount))
			s.RetryCount, s.Phase = 0, PhaseExecuting
			return s, nil
		case gate.AnswerSkip:
			s.Phase = PhaseSkipped
			s.Warnings = append(slices.Clip(s.Warnings), fmt.Sprintf("task %s skipped by operator after %d failed attempts", s.Task.ID, s.RetryCount))
			return s, nil
		}
	}
	now := o.cfg.Now().UTC()
	s.Phase, s.FailedAt = PhaseFailed, &now
	if o.cfg.Name != "" {
		fmt.Fprintf(o.cfg.Log, "%s failed after %d attempts\n", o.cfg.Name, s.RetryCount)
	} else {
		fmt.Fprintf(o.cfg.Log, "task %s FAILED after %d attempts\n", s.Task.ID, s.RetryCount)
	}
	return s, nil
}

// afterFailed sends an escalated task the operator chose to retry back to
// the executor.
func afterFailed(_ context.Context, s TaskState) string {
	if gate.Answer(s.Decision) == gate.AnswerRetry {
		return RouteRetry
	}
	return "end"
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:120]
	}
	if s == "" {
		return "attempt"
	}
	return s
}
