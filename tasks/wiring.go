package tasks

// This file turns a unit's settings into the orchestrator's agents and checks.

import (
	"context"
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

// graph compiles the orchestrator graph for unit t in workspace ws.
func (d *Dispatcher) graph(t Task, ws *workspace.Workspace, stateDir string) (*statgraph.Graph[agents.TaskState], *llm.Budget, error) {
	workdir := ws.Dir()
	if t.Workdir != "" {
		workdir = filepath.Join(ws.Dir(), filepath.FromSlash(t.Workdir))
	}
	limit := 0
	if t.BudgetTokens != nil {
		limit = *t.BudgetTokens
	}
	budget := llm.NewBudget(limit, d.Budget)
	var checks []verifier.Check
	if !t.TestCmd.IsZero() {
		checks = append(checks, verifier.Check{Name: "tests", Kind: verifier.KindTest, Command: verifier.Command{Argv: t.TestCmd.Argv, Shell: t.TestCmd.Shell, Timeout: 10 * time.Minute}})
	}
	if !t.LintCmd.IsZero() {
		checks = append(checks, verifier.Check{Name: "lint", Kind: verifier.KindLint, Command: verifier.Command{Argv: t.LintCmd.Argv, Shell: t.LintCmd.Shell, Timeout: 10 * time.Minute}})
	}
	for _, c := range t.Checks {
		checks = append(checks, verifier.Check{
			Name: c.Name, Kind: verifier.Kind(c.Kind), Mode: verifier.Mode(c.Mode),
			Command: verifier.Command{Argv: c.Cmd.Argv, Shell: c.Cmd.Shell, Timeout: c.Timeout},
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
			PromptDir: filepath.Join(stateDir, "prompts"),
			AllowEnv:  d.AllowEnv,
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

// restoreTokens charges budget with the tokens recorded in the last
// checkpoint of unit id's thread and returns them (0 for a thread that has
// none). Every token a finished node spent is in a checkpoint: the graph
// saves one after every step. A node cut off mid-call (a second Ctrl-C, a
// kill -9) has no checkpoint; it runs again on resume and its tokens are
// spent, and counted, again: the server really charged them twice, but the
// count has only the run that finished.
func restoreTokens(ctx context.Context, g *statgraph.Graph[agents.TaskState], id string, budget *llm.Budget) (int, error) {
	snap, err := g.State(ctx, Thread(id))
	switch {
	case errors.Is(err, statgraph.ErrNoCheckpoint):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("read the last checkpoint of task %s from the run store: %w", id, err)
	}
	budget.Restore(snap.State.Tokens)
	return snap.State.Tokens, nil
}
