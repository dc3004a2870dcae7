// Command statgraph runs a tasks.json through the autonomous coding loop
// (planner -> executor -> verifier, with retries on failed checks) and
// inspects what it did.
//
//	statgraph run [flags] [tasks.json]      run pending tasks
//	statgraph resume [flags] [tasks.json]   continue runs a crash or Ctrl-C left
//	statgraph validate [tasks.json]         check the file, change nothing
//	statgraph status [--json] [tasks.json]  table of tasks
//	statgraph history [flags] <task-id>     attempts, feedback and diff of a task
//	statgraph reset [flags] <task-id>...    send failed or blocked tasks back to pending
//	statgraph graph [--format mermaid|dot|svg] the orchestrator graph
//	statgraph plan [--tag T] [--tasks N] PRD.md  write tasks from a requirements document
//	statgraph expand [--num N] <task-id>    add subtasks to a task
//	statgraph complexity [--json] [tasks.json]  score tasks 1-10 with a recommended number of subtasks
//	statgraph serve [--addr A] [flags] [tasks.json] web UI and JSON API of a plan
//	statgraph clean [flags] [tasks.json]    remove finished tasks' workspaces and checkpoints
//	statgraph land [--onto B] [flags] [tasks.json] land done tasks on a branch, each merge checked
//	statgraph worker --queue URL [flags]    take tasks from a River queue (run --queue)
//	statgraph migrate --queue URL           set up the queue's tables
//	statgraph mcp [flags] [tasks.json]      serve the plan to a coding assistant (MCP over stdio)
//	statgraph sandbox check                 probe the sandbox from inside on this machine
//	statgraph version
//
// Progress goes to stderr (a live table on a terminal, plain lines otherwise
// or with TERM=dumb); the summary table and --json output go to stdout.
//
// Exit codes: 0 every task done, 1 a task failed, is blocked or was left
// interrupted, 2 bad input, usage or setup, 130 interrupted. The commands,
// their flags and the rest are in docs/cli.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/internal/gocacheprog"
	"github.com/statgraph/statgraph/internal/proc"
	"github.com/statgraph/statgraph/internal/secret"
	"github.com/statgraph/statgraph/verifier"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// errUsage marks errors about the command line or the input file.
var errUsage = errors.New("usage")

// usageError is an error the user fixes by changing the command or the file.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }
func (e usageError) Unwrap() error { return errUsage }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// cliWords are the CLI's names for the operations control's advice
// points to.
var cliWords = control.Words{List: "statgraph status", Progress: "statgraph status", Stop: "Ctrl-C in its terminal"}

// exitCode is the exit code of a command that failed with err: 2 for a
// usage error, else by the kind control.Classify gives it (see
// control.Kind).
func exitCode(err error) int {
	if errors.Is(err, errUsage) {
		return exitUsage
	}
	switch kind, _ := control.Classify(err, cliWords); kind {
	case control.KindInternal:
		return exitFailed
	case control.KindCanceled:
		return exitInterrupted
	}
	return exitUsage
}

// errorLine is how the CLI shows a command's error: its message as it
// is, then what to do about it (control.Classify's advice), if anything.
func errorLine(err error) string {
	msg := secret.Scrub(strings.TrimPrefix(err.Error(), "statgraph: "))
	if errors.Is(err, errUsage) {
		return msg
	}
	if _, advice := control.Classify(err, cliWords); advice != "" {
		msg += "; " + advice
	}
	return msg
}

const usage = `statgraph: run a tasks.json through planner -> executor -> verifier, with retries.

Usage:
  statgraph run [run flags] [--plain] [--json] [--retry-failed] [--wait-for-answers] [--integrate B] [--land B]
                [--queue URL] [--remote URL] [--worker-timeout D] [tasks.json]   run pending tasks (default file: tasks.json)
  statgraph resume [flags] [tasks.json]        continue tasks a crash or Ctrl-C left in progress (run's flags)
  statgraph validate [--tag T] [tasks.json]
  statgraph status [--tag T] [--store F] [--repo DIR] [--queue URL] [--json] [tasks.json]
  statgraph history [--file tasks.json] [--tag T] [--store F] [--repo DIR] [--queue URL] [--no-diff] [--json] <task-id>
  statgraph reset [--file tasks.json] [--tag T] [--repo DIR] <task-id>...   send failed or blocked tasks back to pending
  statgraph lessons [--repo DIR] [list [--json] | add [--files P] [--checks C] TEXT | rm KEY...]
                                               what runs learned about the repository, shown to later tasks
  statgraph review [--file tasks.json] [--tag T] [--repo DIR] [--store F] --comment file:line:text... <task-id>
                                               send a done task back with comments on its diff
  statgraph pick [--file tasks.json] [--tag T] [--store F] [--repo DIR] <task-id> <k>   make candidate k a best-of-N task's winner
  statgraph graph [--format mermaid|dot|svg]
  statgraph plan [--file tasks.json] [--tag T] [--tasks N] [--model M] PRD.md   write tasks from a requirements document (docs/cli.md)
  statgraph expand [--file tasks.json] [--tag T] [--num N] [--model M] <task-id>  add subtasks to a pending task
  statgraph complexity [--tag T] [--json] [--report F] [--model M] [tasks.json]   score tasks 1-10 with a recommended number of subtasks
  statgraph serve [--addr 127.0.0.1:7777] [--token-file F | --no-token] [run flags] [tasks.json]   web UI and JSON API (docs/web-and-mcp.md)
  statgraph clean [--tag T] [--store F] [--repo DIR] [--keep-checkpoints N] [--queue URL] [tasks.json]
  statgraph land [--onto main] [run flags] [tasks.json]   land done tasks on a branch one at a time, each merge checked
  statgraph worker --queue URL [--concurrency N] [--lease D] [--model M] [--allow-env A,B] [--no-sandbox]
                                               take tasks that run --queue URL enqueues
  statgraph migrate --queue URL                                set up River's and statgraph's tables
  statgraph mcp [run flags] [tasks.json]       serve the plan to a coding assistant: MCP over stdin/stdout
  statgraph sandbox check                      attack a sandbox from inside and print what holds on this machine
  statgraph version

Run flags, which set up the runs of run, resume, serve and mcp alike:
  [--tag T] [--store F] [--repo DIR] [-j N] [--model M] [--budget N] [--budget-usd X] [--prices FILE]
  [--request-timeout D] [--task-timeout D] [--attempts N] [--max-response-bytes N] [--park-max D] [--park-default D] [--park-after D]
  [--no-sandbox] [--allow-env A,B] [--keep-workspaces] [--notify URL | --notify-cmd CMD]
Run "statgraph <command> -h" for a command's flags.
Progress goes to stderr; the summary table and --json output to stdout.
Model: --model or STATGRAPH_MODEL, OPENAI_BASE_URL (any OpenAI-compatible server), OPENAI_API_KEY.
Exit codes: 0 all done, 1 a task failed or is blocked, 2 bad input or usage, 130 interrupted.
`

// sandboxInitCmd is the hidden command that runs inside the sandbox before
// a check or agent CLI: it puts the command under Landlock and, when its
// network is allowlisted, stays as its parent, the bridge to statgraph's
// proxy (see proc.RunInit and verifier.Sandbox.Helper).
const sandboxInitCmd = "sandbox-init"

func main() {
	// The bridge hands the command it starts its own environment, the
	// secrets an agent CLI is given included, so it skips Isolate, which
	// would take them out.
	if len(os.Args) > 1 && os.Args[1] == sandboxInitCmd {
		os.Exit(proc.RunInit(os.Args[2:], os.Stderr))
	}
	// Secrets (OPENAI_API_KEY, ...) leave the process environment before
	// anything else runs: Isolate re-executes statgraph (same pid, streams
	// and terminal) with them handed over through a pipe, so no process
	// statgraph starts can read them from /proc/<pid>/environ.
	if err := secret.Isolate(proc.IsSecretName); err != nil {
		fmt.Fprintln(os.Stderr, "statgraph: warning:", strings.TrimPrefix(err.Error(), "secret: "))
	}
	code := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
	proc.CloseProxies()
	os.Exit(code)
}

// run executes the command line args and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	var err error
	code := exitOK
	switch cmd, rest := args[0], args[1:]; cmd {
	case "run", "resume":
		code, err = cmdRun(ctx, cmd, rest, stdout, stderr)
	case "validate":
		err = cmdValidate(rest, stdout, stderr)
	case "status":
		err = cmdStatus(ctx, rest, stdout, stderr)
	case "history":
		err = cmdHistory(ctx, rest, stdout, stderr)
	case "reset":
		err = cmdReset(rest, stdout, stderr)
	case "lessons":
		err = cmdLessons(ctx, rest, stdout, stderr)
	case "review":
		err = cmdReview(ctx, rest, stdout, stderr)
	case "pick":
		err = cmdPick(ctx, rest, stdout, stderr)
	case "graph":
		err = cmdGraph(rest, stdout, stderr)
	case "plan":
		err = cmdPlan(ctx, rest, stdout, stderr)
	case "expand":
		err = cmdExpand(ctx, rest, stdout, stderr)
	case "complexity":
		err = cmdComplexity(ctx, rest, stdout, stderr)
	case "serve":
		err = cmdServe(ctx, rest, stdout, stderr)
	case "clean":
		err = cmdClean(ctx, rest, stdout, stderr)
	case "land":
		code, err = cmdLand(ctx, rest, stdout, stderr)
	case "worker":
		code, err = cmdWorker(ctx, rest, stdout, stderr)
	case "migrate":
		err = cmdMigrate(ctx, rest, stdout, stderr)
	case "mcp":
		err = cmdMCP(ctx, rest, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "statgraph", version())
	case "sandbox":
		code, err = cmdSandbox(ctx, rest, stdout, stderr)
	case sandboxProbeCmd: // internal: attacks the sandbox from inside (statgraph sandbox check)
		verifier.ServeSandboxProbe(stdout, rest)
	case goCacheProgCmd: // internal: the sandbox's GOCACHEPROG (see verifier.Sandbox)
		if len(rest) < 2 {
			fmt.Fprintf(stderr, "statgraph: %s UPPER LOWER... is run by go commands inside the sandbox, not by hand\n", cmd)
			return exitUsage
		}
		err = gocacheprog.Serve(os.Stdin, stdout, rest[0], rest[1:]...)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "statgraph: unknown command %q\n\n%s", cmd, usage)
		return exitUsage
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintln(stderr, "statgraph:", errorLine(err))
		if code == exitOK || errors.Is(err, errUsage) {
			code = exitCode(err)
		}
	}
	return code
}

// version returns the module version and VCS revision the binary was built
// from, e.g. "v0.0.0-20261124211041-1a2b3c4d5e6f+dirty" for a go build in a
// git checkout with uncommitted changes (Go 1.24 and later),
// "(devel) 1a2b3c4d5e6f+dirty" when the version holds no revision, or
// "v1.2.0" for go install ...@v1.2.0.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	return versionOf(bi, ok)
}

// versionOf formats build information for version.
func versionOf(bi *debug.BuildInfo, ok bool) string {
	if !ok || bi == nil {
		return "(unknown: the binary has no build information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	switch {
	case rev != "":
		// Since Go 1.24 a build in a git checkout has a pseudo-version
		// holding the revision (and +dirty); say each only once.
		if len(rev) > 12 {
			rev = rev[:12]
		}
		dirty := modified == "true"
		if !strings.Contains(v, rev) {
			v = strings.TrimSuffix(v, "+dirty") + " " + rev
			if dirty {
				v += "+dirty"
			}
		} else if dirty && !strings.HasSuffix(v, "+dirty") {
			v += "+dirty"
		}
	case v == "(devel)":
		v += " (no VCS revision: built outside a git checkout or with -buildvcs=false)"
	}
	return v
}

// newFlags returns a FlagSet that reports errors as usage errors.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("statgraph "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parse parses args, turning flag errors into usage errors, and returns at
// most max positional arguments.
func parse(fs *flag.FlagSet, args []string, max int) ([]string, error) {
	// Accept flags after positional arguments too (statgraph run tasks.json -j 2).
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	if len(pos) > max {
		return nil, usagef("%s: too many arguments: %s", fs.Name(), strings.Join(pos, " "))
	}
	return pos, nil
}
