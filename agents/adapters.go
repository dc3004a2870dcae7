package agents

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/internal/secret"
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
	plan, _, err := p.Client.Plan(ctx, s.Task.Info(), view, p.Budget)
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
	req := execRequest(s, e.MaxTurns)
	req.ExecLimits = e.Limits
	res, err := e.Client.Execute(ctx, e.FS, req, e.Budget)
	if err != nil {
		return "", err
	}
	return res.Summary, nil
}

func execRequest(s TaskState, maxTurns int) llm.ExecRequest {
	return llm.ExecRequest{
		Task: s.Task.Info(), Plan: s.Plan,
		Attempt: s.RetryCount + 1, MaxAttempts: s.maxRetries(),
		Feedback: s.Verification.Feedback, MaxTurns: maxTurns,
	}
}

// CommandExecutor drives an external coding-agent CLI (aider, codex,
// claude, or a script). Argv is a template: the placeholders {prompt_file},
// {workdir}, {attempt} and {task_id} are replaced in every argument. The
// prompt file holds the task, the plan, "Attempt k of N" and the previous
// verification's feedback; it is written under PromptDir, outside the
// workspace, so the agent cannot commit it by accident. The command runs
// directly (no shell) through the verifier's runner: its own process group,
// a timeout, and an environment without the parent's secrets.
type CommandExecutor struct {
	Argv      []string
	Workdir   string
	PromptDir string        // "" means a directory under os.TempDir
	Timeout   time.Duration // 0 means 30 minutes
	// AllowEnv names environment variables to pass through although they
	// look like secrets (e.g. the agent CLI's own API key).
	AllowEnv []string
	// Sandbox confines the agent CLI (see verifier.Sandbox); nil runs it
	// unconfined. The prompt file must be readable inside it.
	Sandbox *verifier.Sandbox
}

// Execute runs the command once. A non-zero exit is not an error: the
// verifier decides whether the attempt worked; the summary says how the
// command ended. It fails only when the command cannot be started.
func (c CommandExecutor) Execute(ctx context.Context, s TaskState) (string, error) {
	if len(c.Argv) == 0 {
		return "", fmt.Errorf("command executor: empty command; set executor.command in tasks.json")
	}
	dir := c.PromptDir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "statgraph-prompts")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("command executor: prompt directory: %w", err)
	}
	n := s.RetryCount + 1
	prompt := filepath.Join(dir, fmt.Sprintf("task-%s-attempt-%d.md", s.Task.ID, n))
	if err := os.WriteFile(prompt, []byte(secret.Scrub(llm.BuildExecutorPrompt(execRequest(s, 0)))), 0o600); err != nil {
		return "", fmt.Errorf("command executor: write prompt: %w", err)
	}
	repl := strings.NewReplacer("{prompt_file}", prompt, "{workdir}", c.Workdir, "{attempt}", strconv.Itoa(n), "{task_id}", s.Task.ID)
	argv := make([]string, len(c.Argv))
	for i, a := range c.Argv {
		argv[i] = repl.Replace(a)
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Minute
	}
	res, err := verifier.Run(ctx, verifier.Command{Argv: argv, Dir: c.Workdir, Timeout: timeout, AllowEnv: c.AllowEnv, MaxOutput: 64 << 10, Sandbox: c.Sandbox})
	if err != nil {
		return "", fmt.Errorf("command executor: %w", err)
	}
	switch {
	case res.TimedOut:
		return fmt.Sprintf("%s timed out after %s", argv[0], timeout), nil
	case res.ExitCode != 0:
		return fmt.Sprintf("%s exited with code %d: %s", argv[0], res.ExitCode, lastLine(res.Output)), nil
	}
	if l := lastLine(res.Output); l != "" {
		return l, nil
	}
	return argv[0] + " finished", nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

// ChecksVerifier runs the task's checks (tests, lint, ...) in the workspace
// and turns their results into a Verification with capped feedback.
type ChecksVerifier struct {
	Checks        []verifier.Check
	Workdir       string
	FeedbackBytes int // 0 means verifier.DefaultFeedbackBytes (8 KiB)
}

// Verify runs the checks.
func (c ChecksVerifier) Verify(ctx context.Context, _ TaskState) (Verification, error) {
	v, err := verifier.Verify(ctx, c.Workdir, c.Checks)
	if err != nil {
		return Verification{}, err
	}
	out := Verification{
		TestsPassed: v.TestsPassed, LintPassed: v.LintPassed,
		Errors: v.Errors, Failures: v.Failures, Warnings: v.Warnings,
	}
	if !v.Passed() {
		out.Feedback = v.Feedback(c.FeedbackBytes)
	}
	return out, nil
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
func (r ReviewVerifier) Verify(ctx context.Context, s TaskState) (Verification, error) {
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
	rev, _, err := r.Client.Review(ctx, s.Task.Info(), s.Plan, diff, r.Budget)
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
