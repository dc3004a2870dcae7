package tasks

// This file turns a unit's settings into the orchestrator's agents and checks.

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/verifier"
)

// graph compiles the orchestrator graph for unit t of repository repo in
// workspace ws.
func (d *Dispatcher) graph(t Task, ws *workspace.Workspace, repo, stateDir string) (*statgraph.Graph[agents.TaskState], *llm.Budget, error) {
	workdir := ws.Dir()
	if t.Workdir != "" {
		workdir = filepath.Join(ws.Dir(), filepath.FromSlash(t.Workdir))
	}
	limit := 0
	if t.BudgetTokens != nil {
		limit = *t.BudgetTokens
	}
	budget := llm.NewBudget(limit, d.Budget)
	promptDir := filepath.Join(stateDir, "prompts")
	sb := d.sandbox(t, ws, repo, stateDir, promptDir)
	var checks []verifier.Check
	if !t.TestCmd.IsZero() {
		checks = append(checks, verifier.Check{Name: "tests", Kind: verifier.KindTest, Command: verifier.Command{Argv: t.TestCmd.Argv, Shell: t.TestCmd.Shell, Timeout: 10 * time.Minute, Sandbox: sb}})
	}
	if !t.LintCmd.IsZero() {
		checks = append(checks, verifier.Check{Name: "lint", Kind: verifier.KindLint, Command: verifier.Command{Argv: t.LintCmd.Argv, Shell: t.LintCmd.Shell, Timeout: 10 * time.Minute, Sandbox: sb}})
	}
	for _, c := range t.Checks {
		checks = append(checks, verifier.Check{
			Name: c.Name, Kind: verifier.Kind(c.Kind), Mode: verifier.Mode(c.Mode),
			Command: verifier.Command{Argv: c.Cmd.Argv, Shell: c.Cmd.Shell, Timeout: c.Timeout, Sandbox: sb},
		})
	}
	cfg := agents.Config{
		Verifier:  agents.ChecksVerifier{Checks: checks, Workdir: workdir},
		Workspace: ws,
		Budget:    budget,
		Log:       d.Log,
	}
	model := d.Model
	if t.Model != "" {
		model.Model = t.Model
	}
	var client *llm.Client
	if model.Model != "" {
		c, err := llm.New(model)
		if err != nil {
			return nil, nil, err
		}
		client = c
		cfg.Planner = agents.LLMPlanner{Client: c, Workdir: workdir, Budget: budget}
	}
	if t.Executor.IsLLM() {
		if client == nil {
			return nil, nil, errors.New("task needs a model but none is configured: pass --model NAME or set STATGRAPH_MODEL " +
				"(with OPENAI_BASE_URL for a local server such as Ollama, and OPENAI_API_KEY if it needs one), " +
				"or give the task an \"executor\": {\"command\": [...]}")
		}
		cfg.Executor = agents.LLMExecutor{Client: client, FS: ws.FS(), Budget: budget}
	} else {
		cfg.Executor = agents.CommandExecutor{
			Argv: t.Executor.Command, Workdir: workdir,
			PromptDir: promptDir,
			AllowEnv:  d.AllowEnv,
			Sandbox:   sb,
		}
	}
	if t.Review != nil && *t.Review {
		if client == nil {
			return nil, nil, errors.New("task asks for a review (\"review\": true) but no model is configured: pass --model NAME or set STATGRAPH_MODEL, or remove \"review\"")
		}
		cfg.Verifier = agents.ReviewVerifier{Checks: cfg.Verifier, Client: client, Workspace: ws, Budget: budget}
	}
	g, err := agents.NewGraph(cfg, statgraph.WithCheckpointer(d.Checkpointer))
	return g, budget, err
}

// checkSandbox returns an error wrapping verifier.ErrSandboxUnavailable
// when the sandbox cannot be set up, unless NoSandbox is set; then it writes
// to Log, once, what is left unprotected.
func (d *Dispatcher) checkSandbox() error {
	if !d.NoSandbox {
		if err := verifier.SandboxAvailable(); err != nil {
			return fmt.Errorf("statgraph refuses to run checks without a sandbox: %w", err)
		}
		return nil
	}
	if d.Log != nil {
		fmt.Fprintln(d.Log, "warning: --no-sandbox: checks and agent CLIs run unprotected: they can write anywhere you can "+
			"(your repository and its .git, $HOME), read statgraph's environment through /proc, "+
			"leave processes running after the run, and use the network")
	}
	return nil
}

// sandbox returns the sandbox of unit t's checks and agent CLI, or nil with
// NoSandbox: the workspace is writable and its .git read-only, the user's
// repository is read-only (and visible even under /tmp), the state
// directory (run store, other units' workspaces) is hidden except the
// prompt files, and the unit's tool caches live in <stateDir>/cache/<id>.
// One Sandbox is shared by the unit's commands; Run only reads it.
func (d *Dispatcher) sandbox(t Task, ws *workspace.Workspace, repo, stateDir, promptDir string) *verifier.Sandbox {
	if d.NoSandbox {
		return nil
	}
	return &verifier.Sandbox{
		Workspace: ws.Dir(),
		ReadOnly:  []string{repo, filepath.Join(ws.Dir(), ".git"), promptDir},
		Hide:      []string{stateDir},
		CacheDir:  filepath.Join(stateDir, "cache", t.ID),
		Network:   t.Sandbox.NetworkOn(),

		GoCacheProg: d.GoCacheProg,
	}
}
