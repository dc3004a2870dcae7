package dispatch

// This file turns a unit's settings into the orchestrator's agents and checks.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/internal/proc"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/tasks"
	"github.com/statgraph/statgraph/verifier"
)

// graph compiles the orchestrator graph for unit t in workspace ws.
// A candidate (s.k > 0) spends from its unit's budget (s.budget), which
// counts every candidate, and has prompt files and a home of its own.
func (d *Dispatcher) graph(t tasks.Task, ws *workspace.Workspace, plan Plan, s slot) (*statgraph.Graph[agents.TaskState], *llm.Budget, error) {
	workdir := ws.Dir()
	if t.Workdir != "" {
		workdir = filepath.Join(ws.Dir(), filepath.FromSlash(t.Workdir))
	}
	var limit llm.Limit
	if t.BudgetTokens != nil {
		limit.Tokens = *t.BudgetTokens
	}
	if t.BudgetUSD != nil {
		limit.USD = *t.BudgetUSD
	}
	prices := d.priceTable()
	budget := llm.NewBudgetOf(limit, d.Budget, nil)
	if s.budget != nil {
		budget = llm.NewBudget(0, s.budget)
	}
	sb := d.sandbox(t, ws.Dir(), plan)
	checks, workdir := unitChecks(t, ws, sb)
	cfg := agents.Config{
		Verifier:  agents.ChecksVerifier{Checks: checks, Workdir: workdir},
		Workspace: ws,
		Budget:    budget,
		Log:       d.Log,
	}
	switch { // the failed line names a candidate or a landing, whose failure is not the task's
	case s.onto != "":
		cfg.Name = fmt.Sprintf("task %s: landing on %s", s.id, s.onto)
	case s.k > 0:
		cfg.Name = fmt.Sprintf("task %s: candidate %d", s.id, s.k)
	}
	opts := []statgraph.CompileOption{statgraph.WithCheckpointer(d.Checkpointer)}
	if d.Lessons != nil {
		opts = append(opts, statgraph.WithStore(d.Lessons))
		cfg.LessonNamespace = agents.LessonNamespace(plan.Repo)
		for _, c := range checks {
			cfg.CheckNames = append(cfg.CheckNames, c.Name)
		}
	}
	model := d.Model
	if t.Model != "" {
		model.Model = t.Model
	}
	model.Prices = prices
	if t.RequestTimeout > 0 {
		model.Timeout = t.RequestTimeout
	}
	if t.Limits.ResponseBytes > 0 {
		model.MaxResponseBytes = int64(t.Limits.ResponseBytes)
	}
	var client *llm.Client
	if model.Model != "" {
		c, err := llm.New(model)
		if err != nil {
			return nil, nil, err
		}
		client = c
		// A task whose executor is an agent CLI gets no model plan: the CLI
		// plans its own work, with its own model, and a planner call would
		// spend the run's model (maybe another provider's) on a plan nobody
		// reads but the CLI's prompt. Unless the task asks a person to
		// approve a plan first (approve_plan): then the plan is what they
		// approve, and the CLI gets it.
		if t.Executor.IsLLM() || (t.ApprovePlan != nil && *t.ApprovePlan) {
			cfg.Planner = agents.LLMPlanner{Client: c, Workdir: workdir, Budget: budget}
		}
	}
	if t.Executor.IsLLM() {
		if client == nil {
			return nil, nil, &agents.InfraError{Reason: "task needs a model but none is configured: pass --model NAME or set STATGRAPH_MODEL " +
				"(with OPENAI_BASE_URL for a local server such as Ollama, and OPENAI_API_KEY if it needs one), " +
				"or give the task an agent CLI as \"executor\" (a preset such as \"codex\", or {\"command\": [...]})"}
		}
		cfg.Executor = agents.LLMExecutor{Client: client, FS: ws.FS(), Budget: budget, Limits: llm.ExecLimits{
			MaxToolCallsPerTurn: t.Limits.ToolCallsPerTurn, MaxConversationBytes: t.Limits.ConversationBytes,
			MaxWriteBytes: t.Limits.WriteBytes, MaxWriteFiles: t.Limits.WriteFiles,
		}}
	} else {
		c := commandExecutor(t.Executor, d.AllowEnv)
		c.Workdir, c.PromptDir, c.HomeDir = workdir, plan.UnitPromptDir(s.name()), plan.HomeDir(s.name())
		c.Budget, c.Workspace, c.Sandbox = budget, ws, sb
		if pr, ok := prices.Price(t.Model); ok && t.Model != "" {
			c.Price = &pr
		}
		cfg.Executor = c
	}
	if t.Review != nil && *t.Review {
		if client == nil {
			return nil, nil, errors.New("task asks for a review (\"review\": true) but no model is configured: pass --model NAME or set STATGRAPH_MODEL, or remove \"review\"")
		}
		cfg.Verifier = agents.ReviewVerifier{Checks: cfg.Verifier, Client: client, Workspace: ws, Budget: budget}
	}
	g, err := agents.NewGraph(cfg, opts...)
	return g, budget, err
}

// unitChecks returns the checks of unit t in workspace ws, each run in
// sandbox sb (nil: none): its test_cmd and lint_cmd, the conflict check of
// a workspace that started from a conflicted merge, and its "checks"; and
// the directory they run in (the task's workdir in ws).
func unitChecks(t tasks.Task, ws *workspace.Workspace, sb *verifier.Sandbox) ([]verifier.Check, string) {
	workdir := ws.Dir()
	if t.Workdir != "" {
		workdir = filepath.Join(ws.Dir(), filepath.FromSlash(t.Workdir))
	}
	checks := testAndLint(t.TestCmd, t.LintCmd, sb)
	checks = append(checks, conflictChecks(ws)...)
	for _, c := range t.Checks {
		vc := check(c)
		vc.Command.Sandbox = sb
		checks = append(checks, vc)
	}
	return checks, workdir
}

// checkSandbox returns an error wrapping verifier.ErrSandboxUnavailable
// when the sandbox cannot be set up or, with SandboxProbe, when an attack
// from inside gets through, unless NoSandbox is set; then it writes to Log,
// once, what is left unprotected.
func (d *Dispatcher) checkSandbox() error {
	if !d.NoSandbox {
		if len(d.SandboxProbe) == 0 {
			if err := verifier.SandboxAvailable(); err != nil {
				return fmt.Errorf("statgraph refuses to run checks without a sandbox: %w", err)
			}
			return nil
		}
		helper, _ := d.programs()
		return probeSandbox(d.SandboxProbe, helper)
	}
	if d.Log != nil {
		fmt.Fprintln(d.Log, "warning: --no-sandbox: checks and agent CLIs run unprotected: they can write anywhere you can "+
			"(your repository and its .git, $HOME), read statgraph's environment through /proc, "+
			"leave processes running after the run, and use the network")
	}
	return nil
}

// probed holds the outcome of the sandbox probe of each probe program, so
// that a process (a worker running many units) attacks its sandbox once.
var probed sync.Map // strings.Join(probe, " ") -> func() error

// probeSandbox attacks a sandbox from inside with probe, through helper
// (the checks' Helper) when set, once per process, and returns an error
// naming every attack that got through.
func probeSandbox(probe, helper []string) error {
	once, _ := probed.LoadOrStore(strings.Join(probe, " "), sync.OnceValue(func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		probes, err := verifier.CheckSandbox(ctx, probe, helper)
		if err != nil {
			return fmt.Errorf("statgraph refuses to run checks without a sandbox: %w", err)
		}
		var broken []string
		for _, p := range probes {
			if !p.Held {
				broken = append(broken, fmt.Sprintf("%s (%s; %s)", p.Name, p.Detail, p.Fix))
			}
		}
		if len(broken) > 0 {
			return fmt.Errorf("statgraph refuses to run checks: %w: attacks from inside got through: %s; "+
				"`statgraph sandbox check` prints the whole table; or pass --no-sandbox knowingly",
				verifier.ErrSandboxUnavailable, strings.Join(broken, "; "))
		}
		return nil
	}))
	return once.(func() error)()
}

// sandbox returns the sandbox of unit t's checks and agent CLI, or nil with
// NoSandbox: the workspace is writable and its .git read-only, the user's
// repository is read-only (and visible even under /tmp), the state
// directory (run store, other units' workspaces, prompts and the agents'
// private homes) is hidden, the user's repository is not shown at all, and
// the unit's tool caches live in plan.CacheDir, over the build caches of the
// units it builds on (layers.go); the workspace appears at the repository's
// path, so that build-cache keys match. The network is the task's:
// closed but for its hosts (an agent CLI adds its model's), or the host's
// with "network": true; sandbox.read and sandbox.hide add to what is
// read-only and hidden. One Sandbox is shared by the unit's commands; Run
// only reads it. The agent CLI's sandbox adds the unit's own prompt
// directory and private home (agents.CommandExecutor), which the checks
// never see.
func (d *Dispatcher) sandbox(t tasks.Task, wsDir string, plan Plan) *verifier.Sandbox {
	if d.NoSandbox {
		return nil
	}
	home, _ := os.UserHomeDir()
	helper, goCacheProg := d.programs()
	paths := func(list []string) []string {
		out := make([]string, 0, len(list))
		for _, p := range list {
			out = append(out, tasks.HomePath(p, home))
		}
		return out
	}
	return &verifier.Sandbox{
		Workspace:  wsDir,
		ReadOnly:   append([]string{filepath.Join(wsDir, ".git")}, paths(t.Sandbox.Read)...),
		Hide:       append(hiddenState(plan), paths(t.Sandbox.Hide)...),
		CacheDir:   plan.CacheDir(t.ID),
		Network:    t.Sandbox.NetworkOn(),
		AllowHosts: slices.Clone(t.Sandbox.Hosts),
		Helper:     helper,
		Limits: proc.Limits{Procs: t.Limits.Processes, MemoryBytes: int64(t.Limits.MemoryBytes),
			TmpBytes: int64(t.Limits.TmpBytes), OpenFiles: t.Limits.OpenFiles},

		GoCacheProg:   goCacheProg,
		GoCacheLayers: d.goCacheLayers(plan, t.ID),
		Root:          plan.Repo,
	}
}

// programs returns the sandbox's sandbox-init program and cache program:
// the small ones built in statgraph's state root (workspace.BinDir) from
// the source statgraph embeds, else SandboxHelper and GoCacheProg
// (statgraph's own binary). Each is built at most once per process.
func (d *Dispatcher) programs() (helper, goCacheProg []string) {
	bin, err := workspace.BinDir()
	if err != nil {
		return d.SandboxHelper, d.GoCacheProg
	}
	helper, _ = verifier.SandboxInitProgram(bin, d.SandboxHelper) // statgraph's own serves when it cannot be built
	return helper, verifier.GoCacheProgram(bin, d.GoCacheProg)
}

// noteOpenNetwork writes to Log, once, which of the units that may run
// keep the host's network in their sandbox ("network": true).
func (d *Dispatcher) noteOpenNetwork() {
	if d.Log == nil || d.NoSandbox { // --no-sandbox's warning says it already
		return
	}
	var ids []string
	for _, u := range d.File.Units() {
		if t, ok := d.File.Task(u.ID); ok && t.Sandbox.NetworkOn() && !tasks.IsDone(t.Status) {
			ids = append(ids, u.ID)
		}
	}
	if len(ids) > 0 {
		fmt.Fprintf(d.Log, "note: task %s: \"sandbox\": {\"network\": true} gives checks and agent CLIs the host's whole network, "+
			"this machine's own services included; list the hosts they need instead\n", strings.Join(ids, ", "))
	}
}

// testAndLint returns the blocking checks of a test_cmd and a lint_cmd
// (either may be unset), each run in sandbox sb (nil: none) with a
// 10-minute timeout.
func testAndLint(test, lint tasks.Command, sb *verifier.Sandbox) []verifier.Check {
	var checks []verifier.Check
	for _, c := range []verifier.Check{{Name: "tests", Kind: verifier.KindTest, Command: command(test)}, {Name: "lint", Kind: verifier.KindLint, Command: command(lint)}} {
		if c.Command.IsZero() {
			continue
		}
		c.Command.Timeout, c.Command.Sandbox = 10*time.Minute, sb
		checks = append(checks, c)
	}
	return checks
}

// command is the file's command c as the verifier's process runner takes
// it; the caller sets where and how it runs (Dir, Sandbox, ...).
func command(c tasks.Command) verifier.Command {
	return verifier.Command{Shell: c.Shell, Argv: c.Argv, Timeout: c.Timeout}
}

// check is the file's check c as the verifier runs it: its kind and mode
// have the verifier's spelling (tasks.CheckKinds, tasks.CheckModes).
func check(c tasks.Check) verifier.Check {
	return verifier.Check{Name: c.Name, Command: command(c.Command), Kind: verifier.Kind(c.Kind), Mode: verifier.Mode(c.Mode)}
}

// hiddenState lists what a sandbox hides of statgraph's state: the plan's
// directory (its run store, the other units' workspaces) and the whole
// state root, which holds every other plan's run store and workspaces,
// unless the root holds the repository itself (an unusual STATGRAPH_HOME),
// which must stay visible.
func hiddenState(plan Plan) []string {
	hide := []string{plan.Dir}
	root, err := workspace.StateRoot()
	if err != nil {
		return hide
	}
	if rel, err := filepath.Rel(root, plan.Repo); err == nil && !filepath.IsLocal(rel) && rel != "." {
		hide = append(hide, root)
	}
	return hide
}

// commandExecutor returns the agent CLI of executor e (a preset or a
// command) with its settings from tasks.json; allow names more variables
// to pass through (run's --allow-env).
func commandExecutor(e tasks.Executor, allow []string) agents.CommandExecutor {
	c := agents.CommandExecutor{Argv: e.Command}
	if e.Preset != "" {
		c, _ = agents.Preset(e.Preset)
	}
	c.Stdin = c.Stdin || e.Stdin
	c.Timeout = e.Timeout
	c.Env = append(append(c.Env, allow...), e.Env...)
	return c
}

// restoreTokens charges budget with the usage (tokens and cost) recorded
// in the last checkpoint of the unit's thread and returns it (zero for a
// thread that has none; a checkpoint older than costs has its tokens
// unpriced). Every token a finished node spent is in a checkpoint: the
// graph saves one after every step. A node cut off mid-call (a second
// Ctrl-C, a kill -9) has no checkpoint; it runs again on resume and its
// tokens are spent, and counted, again: the server really charged them
// twice, but the count has only the run that finished.
func restoreTokens(ctx context.Context, g *statgraph.Graph[agents.TaskState], thread string, budget *llm.Budget) (llm.Usage, error) {
	snap, err := g.State(ctx, thread)
	switch {
	case errors.Is(err, statgraph.ErrNoCheckpoint):
		return llm.Usage{}, nil
	case err != nil:
		return llm.Usage{}, fmt.Errorf("read the last checkpoint of %s from the run store: %w", thread, err)
	}
	u := snap.State.Spend()
	budget.Restore(u)
	return u, nil
}

// priceTable returns the prices of the run's models: the built-in table,
// under tasks.json's defaults.prices, under Prices. It is read once per
// Dispatcher (Run and RunOne call it before their units start).
func (d *Dispatcher) priceTable() llm.Prices {
	d.pricesOnce.Do(func() {
		p := llm.DefaultPrices()
		if fp := d.File.Defaults.Prices; fp != nil {
			over := make(llm.Prices, len(fp))
			for m, pr := range fp {
				over[m] = llm.Price{Input: pr.Input, CachedInput: pr.CachedInput, Output: pr.Output}
			}
			p = p.With(over)
		}
		d.prices = p.With(d.Prices)
	})
	return d.prices
}
