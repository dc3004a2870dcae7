package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

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
	var rf runFlags
	rf.register(fs)
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	ro, err := rf.options()
	if err != nil {
		return err
	}
	file := "tasks.json"
	if len(pos) > 0 {
		file = pos[0]
	}
	// The runs run_pending starts are traced as statgraph run's are; what
	// is left is flushed when the session ends (after Close stops a run).
	tp, flush := tracingFromEnv(ctx, os.Getenv, stderr)
	defer flush()
	ro.Tracer, ro.Log = tp, stderr
	o := control.Options{Run: ro}
	ctl, _, err := openPlan(c, file, o, stderr)
	if err != nil {
		return err
	}
	defer ctl.Close()
	warnQueue(ctx, ctl, stderr)
	// SIGINT or SIGTERM ends the session; Close then stops the run.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := mcpserver.Run(ctx, ctl, version()); err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}
