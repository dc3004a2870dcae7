package control

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/tasks"
	"github.com/statgraph/statgraph/verifier"
)

// RunOptions are the settings of a run, as statgraph run's flags give
// them. statgraph run, and the runs Start begins (statgraph serve and
// statgraph mcp), check their plan with CheckPlan and Check and make their
// Dispatcher with Dispatcher, so a run behaves the same whoever starts it.
// The zero value runs command executors only (no model), as many tasks at
// once as there are CPUs, sandboxed, with no budget, deadline or tracing.
type RunOptions struct {
	// Model is the model configuration, with its bound on each request
	// (Timeout, --request-timeout) and on each response (MaxResponseBytes,
	// --max-response-bytes); the zero value has no model.
	Model llm.Config
	// Jobs is how many tasks run at once; 0 means the number of CPUs.
	Jobs int
	// Budget is the global token budget of each run; 0 means unlimited.
	Budget int
	// BudgetUSD is the global budget of each run in US dollars (priced
	// tokens only, see llm.Budget); 0 means unlimited.
	BudgetUSD float64
	// Prices price models over the built-in table and tasks.json's
	// defaults.prices (run's --prices file); nil adds none.
	Prices llm.Prices
	// NoSandbox runs checks and agent CLIs without the sandbox.
	NoSandbox bool
	// TaskTimeout is the deadline of each task's run; 0 means none.
	TaskTimeout time.Duration
	// ParkMax bounds how long a run waits for a usage limit's reset (see
	// dispatch.Dispatcher.ParkMax); 0 means a day.
	ParkMax time.Duration
	// ParkDefault is how long a usage limit with no reset time parks a
	// task (see dispatch.Dispatcher.ParkDefault); 0 means 15 minutes.
	ParkDefault time.Duration
	// Attempts is the number of candidates of a task that sets neither
	// "attempts" nor "candidates" (--attempts); 0 means one.
	Attempts int
	// AllowEnv names more environment variables passed to agent CLIs.
	AllowEnv []string
	// GoCacheProg serves the sandbox's go build cache (see
	// dispatch.Dispatcher.GoCacheProg); nil gives each task a fresh one.
	GoCacheProg []string
	// SandboxProbe attacks the sandbox from inside before the first task
	// (see dispatch.Dispatcher.SandboxProbe); nil checks only that it starts.
	SandboxProbe []string
	// SandboxHelper carries the allowlisting proxy into sandboxes (see
	// dispatch.Dispatcher.SandboxHelper).
	SandboxHelper []string
	// KeepWorkspaces keeps each finished task's workspace.
	KeepWorkspaces bool
	// Notify is where the run's notifications go (see Notifier); the zero
	// value means the tasks file's defaults.notify, if any.
	Notify Notify
	// Tracer, when set, traces each run as OpenTelemetry spans (run, task,
	// attempt, node, model calls, checks: see dispatch.Dispatcher.Tracer);
	// nil traces nothing.
	Tracer trace.TracerProvider
	// Log receives the orchestrator's own lines of a run; nil discards
	// them.
	Log io.Writer
}

// CheckRepo reports, with what to do about it, a repo that tasks cannot
// run on: not the top of a git repository, or one without a commit.
func CheckRepo(repo string) error {
	if _, err := workspace.CheckSource(repo); err != nil {
		abs, _ := filepath.Abs(repo)
		switch {
		case errors.Is(err, workspace.ErrNotRepository):
			return kinded(KindRefused, fmt.Errorf("%s is not the top directory of a git repository: statgraph works on per-task branches of your repository; "+
				"run git init, add and commit your files there, or pass --repo DIR", abs))
		case errors.Is(err, workspace.ErrNoCommit):
			return kinded(KindRefused, fmt.Errorf("the repository %s has no commit yet: tasks start from its HEAD commit; commit your files first (git add -A && git commit -m init)", abs))
		}
		return err
	}
	return nil
}

// CheckPlan is the first check of every run, before anything is written:
// it reports a repository tasks cannot run on (CheckRepo) or a state path
// of the plan that is a symbolic link (dispatch.Plan.Check), with what to do.
func CheckPlan(plan dispatch.Plan) error {
	if err := CheckRepo(plan.Repo); err != nil {
		return err
	}
	if err := plan.Check(); err != nil {
		return kinded(KindRefused, fmt.Errorf("%w; nothing was changed", err))
	}
	return nil
}

// Check is the check of a run whose tasks run in this process (not on
// workers), before anything is written: that checks can be sandboxed
// (unless NoSandbox; verifier.ErrSandboxUnavailable otherwise) and that
// the setup the runnable tasks of f need is there (dispatch.Preflight: the
// model and its key, the agent CLIs). Its errors say what to do; it
// changes nothing.
func (o RunOptions) Check(ctx context.Context, f *tasks.File, repo string) error {
	if err := checkSandbox(o.NoSandbox); err != nil {
		return err
	}
	if err := dispatch.Preflight(ctx, f, repo, o.Model, nil); err != nil {
		return kinded(KindRefused, fmt.Errorf("%s cannot run; nothing was changed:\n%w", f.Path, err))
	}
	return nil
}

// checkSandbox is Check's first step, which a worker takes too
// (PrepareWorker): unless noSandbox, that checks can be sandboxed here.
func checkSandbox(noSandbox bool) error {
	if noSandbox {
		return nil
	}
	if err := verifier.SandboxAvailable(); err != nil {
		return fmt.Errorf("statgraph refuses to run checks without a sandbox; nothing was changed: %w", err)
	}
	return nil
}

// Dispatcher returns the Dispatcher that runs f's tasks in repo with these
// settings, its checkpoints in st, and a new budget of its own. The caller
// sets what depends on who watches the run (Report, Ask, a queue's
// Runner), holds the plan's lock and has settled f (Settle).
func (o RunOptions) Dispatcher(f *tasks.File, repo string, st statgraph.Checkpointer) *dispatch.Dispatcher {
	d := &dispatch.Dispatcher{
		File: f, Repo: repo, Checkpointer: st, Jobs: o.Jobs, Model: o.Model,
		Log: o.Log, TaskTimeout: o.TaskTimeout, ParkMax: o.ParkMax, ParkDefault: o.ParkDefault, NoSandbox: o.NoSandbox,
		AllowEnv: o.AllowEnv, GoCacheProg: o.GoCacheProg, SandboxProbe: o.SandboxProbe, SandboxHelper: o.SandboxHelper,
		KeepWorkspaces: o.KeepWorkspaces, Attempts: o.Attempts, Prices: o.Prices,
		Tracer: o.Tracer,
	}
	if o.Budget > 0 || o.BudgetUSD > 0 {
		d.Budget = llm.NewRunBudget(llm.Limit{Tokens: o.Budget, USD: o.BudgetUSD}, nil)
	}
	return d
}
