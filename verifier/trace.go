package verifier

import (
	"context"
	"strings"

	"github.com/statgraph/statgraph/internal/obs"
	"github.com/statgraph/statgraph/internal/secret"
	"github.com/statgraph/statgraph/statgraph/gate"
)

// maxTracedCommand caps the command line recorded on a trace span.
const maxTracedCommand = 1024

// startCheck reports check c to the trace hook ctx carries, if any (see
// package internal/obs): its name, kind, mode and command line. The
// command is the user's own text from tasks.json, scrubbed of secrets;
// the environment the check runs with is never recorded. Without a hook it
// returns a nil End, so that the caller builds no attributes.
func startCheck(ctx context.Context, c Check, name string) (context.Context, obs.End) {
	if !obs.Enabled(ctx) {
		return ctx, nil
	}
	kind, mode := c.Kind, c.Mode
	if kind == "" {
		kind = KindOther
	}
	mode = mode.For(gate.Critical)
	return obs.Start(ctx, "check "+name,
		obs.String("statgraph.check.name", name),
		obs.String("statgraph.check.kind", string(kind)),
		obs.String("statgraph.check.mode", string(mode)),
		obs.String("process.command_line", commandLine(c.Command)),
	)
}

// checkAttrs are what a finished check reports on its span.
func checkAttrs(r CheckResult) []obs.Attr {
	return []obs.Attr{
		obs.Int("process.exit.code", r.ExitCode),
		obs.Bool("statgraph.check.passed", r.Passed),
		obs.Bool("statgraph.check.timed_out", r.TimedOut),
		obs.Int("statgraph.check.duration_ms", int(r.Duration.Milliseconds())),
		obs.Int("statgraph.check.failures", len(r.Failures)),
	}
}

// commandLine is c as one line for a person or a trace (the shell text, or
// the argv joined by spaces), scrubbed of secrets and capped at 1 KiB. It
// never includes c.Env.
func commandLine(c Command) string {
	s := c.Shell
	if s == "" {
		s = strings.Join(c.Argv, " ")
	}
	s = secret.Scrub(s)
	if len(s) > maxTracedCommand {
		s = s[:maxTracedCommand] + "…"
	}
	return s
}
