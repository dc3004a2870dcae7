package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/mcpserver"
)

// cmdMCP serves a plan over the Model Context Protocol on stdin and stdout
// until the client disconnects (stdin closes) or a signal arrives; a run
// that run_pending started is then stopped as Ctrl-C stops one, and
// tasks.json is saved. Everything but the protocol goes to stderr.
func cmdMCP(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlags("mcp", stderr)
	var c common
	c.register(fs)
	jobs := fs.Int("j", 0, "tasks a run_pending run runs at once (default: number of CPUs)")
	model := fs.String("model", "", "model name for the LLM planner and executor (default $STATGRAPH_MODEL)")
	budget := fs.Int("budget", 0, "global token budget of each run (0 = unlimited)")
	taskTimeout := fs.Duration("task-timeout", 0, "deadline of each task's run, e.g. 20m (default none)")
	noSandbox := fs.Bool("no-sandbox", false, "run checks and agent CLIs without the bubblewrap sandbox (unprotected: see README, Sandbox)")
	allowEnv := fs.String("allow-env", "", "comma-separated environment variables to pass to agent CLIs besides those their preset or \"env\" names")
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	if *taskTimeout < 0 {
		return usagef("--task-timeout %s: want a positive duration such as 20m, or 0 for none", *taskTimeout)
	}
	file := "tasks.json"
	if len(pos) > 0 {
		file = pos[0]
	}
	mc := llm.ConfigFromEnv()
	if *model != "" {
		mc.Model = *model
	}
	o := control.Options{Model: mc, Jobs: *jobs, Budget: *budget, NoSandbox: *noSandbox, TaskTimeout: *taskTimeout, Log: stderr}
	if exe, err := os.Executable(); err == nil {
		o.GoCacheProg = []string{exe, goCacheProgCmd}
	}
	for _, name := range strings.Split(*allowEnv, ",") {
		if name = strings.TrimSpace(name); name != "" {
			o.AllowEnv = append(o.AllowEnv, name)
		}
	}
	ctl, _, err := openPlan(c, file, o, stderr)
	if err != nil {
		return err
	}
	defer ctl.Close()
	// SIGINT or SIGTERM ends the session; Close then stops the run.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := mcpserver.Run(ctx, ctl, version()); err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}
