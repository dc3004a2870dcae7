package agents

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/internal/obs"
	"github.com/statgraph/statgraph/internal/secret"
	"github.com/statgraph/statgraph/verifier"
)

// Defaults of CommandExecutor fields left zero.
const (
	// DefaultCommandTimeout bounds one run of an agent CLI.
	DefaultCommandTimeout = 30 * time.Minute
	// DefaultCrashWindow: an agent CLI that exits non-zero within this time
	// of starting, having changed nothing, crashed before it did anything.
	DefaultCrashWindow = 5 * time.Second
)

// CommandExecutor drives an external coding-agent CLI (aider, codex,
// claude, gemini, qwen, opencode, or a script); Preset returns one set up
// for a known CLI. Argv is a template: the placeholders {prompt},
// {prompt_file}, {workdir}, {attempt} and {task_id} are replaced in every
// argument, each argument staying one argument ({prompt} is the prompt
// text itself). The prompt holds the task, the plan, "Attempt k of N" and
// the previous verification's feedback; it is always written to a file
// under PromptDir, outside the workspace, so the agent cannot commit it by
// accident. The command runs directly (no shell) through the verifier's
// runner: its own process group, a timeout, and an environment without the
// parent's secrets except the variables Env names.
//
// A CommandExecutor is a value; Execute is safe for concurrent use when
// each call has its own Workdir.
type CommandExecutor struct {
	Argv      []string
	Workdir   string
	PromptDir string        // "" means a directory under os.TempDir
	Timeout   time.Duration // 0 means DefaultCommandTimeout
	// Stdin gives the agent the prompt on its standard input; false means
	// /dev/null.
	Stdin bool
	// Env lists what the agent gets besides the runner's allow-list (PATH,
	// HOME, LANG, ...) and the proxy variables (HTTP_PROXY, HTTPS_PROXY,
	// NO_PROXY, ALL_PROXY, also lower-case), which it always gets: a NAME
	// passes that variable through when it is set, a PREFIX* every variable
	// starting with PREFIX, and NAME=VALUE sets it. Values are read from
	// AgentEnviron, secret-looking names included: naming one is the consent.
	Env []string
	// Usage reads the tokens the agent spent (and, optionally, its final
	// message and its cost) from its output; nil means the agent reports
	// none. The usage is charged to Budget, which is checked before the
	// agent starts: a spent budget refuses the attempt with an error
	// matching llm.ErrBudget, before anything runs.
	Usage  UsageFunc
	Budget *llm.Budget
	// Limit reads the agent's provider's usage or rate limit message from
	// the output of a run that exited non-zero: Execute then returns a
	// *llm.LimitError saying until when, so the task is parked rather
	// than failed. Nil means the agent's limit messages are not known.
	Limit LimitFunc
	// LiveLimit, for an agent whose CLI does not exit on its provider's
	// limit (it retries on, or waits quietly), recognises the limit in a
	// line of its output while it runs: the agent is stopped at once and
	// Execute returns a *llm.LimitError, whose reset Limit reads from the
	// output so far (none: the dispatcher's default wait). Nil means the
	// limit is read only once the agent exits.
	LiveLimit LiveLimitFunc
	// Price, when set, prices the tokens of an agent that reports no cost
	// of its own (the price of the model it is known to use); nil leaves
	// them unpriced, their cost unknown. A cost the agent reports wins.
	Price *llm.Price
	// Workspace, when set, tells whether the agent changed anything: a run
	// that exits non-zero within CrashWindow (or with a fatal error in its
	// output) without changing the workspace is an *InfraError, not a
	// failed attempt. Nil means only "not found" is an infrastructure error.
	Workspace interface{ TreeHash() (string, error) }
	// CrashWindow: 0 means DefaultCrashWindow.
	CrashWindow time.Duration
	// Sandbox confines the agent CLI (see verifier.Sandbox); nil runs it
	// unconfined. PromptDir is bound read-only into it, for the agent only
	// (the checks sharing Sandbox do not see it).
	Sandbox *verifier.Sandbox
	// HomeDir, with a Sandbox, is where the agent's private HOMEs are made:
	// each attempt gets a new one, writable, holding fresh copies of the
	// HomeConfig paths of the user's HOME (see newHome), and removed when
	// the attempt ends, however it ends; nothing in it is ever copied back,
	// so the agent cannot change the user's dotfiles. Keep it in a
	// directory the checks' sandbox hides (statgraph's state directory);
	// RemoveStaleHomes removes what a killed process left. "" keeps the
	// user's HOME, read-only.
	HomeDir string
	// HomeConfig lists the agent's configuration files and directories,
	// relative to HOME (".qwen", ".claude.json", ".config/opencode"), that
	// its private HOME starts with, so its login and settings work. The
	// values in them that look like credentials are scrubbed from
	// everything statgraph keeps or shows (see secret.AddCredentials).
	HomeConfig []string
	// Hosts are the hosts the agent reaches its model at (the preset's
	// providers), allowed in its sandbox's network besides the Sandbox's
	// own AllowHosts, as is the host:port of each base URL variable in the
	// agent's environment (BaseURLVars). The checks' sandbox gets neither.
	Hosts []string
}

// BaseURLVars are the variables agent CLIs take their model server's URL
// from; the host:port each names in an agent's environment is allowed in
// its sandbox (http://127.0.0.1:11434/v1 gives "127.0.0.1:11434", which
// the sandbox also serves at that address inside).
var BaseURLVars = []string{"OPENAI_BASE_URL", "OPENAI_API_BASE", "ANTHROPIC_BASE_URL", "OLLAMA_API_BASE", "GOOGLE_GEMINI_BASE_URL"}

// maxArgLen is Linux's limit on one argument (MAX_ARG_STRLEN, 32 pages),
// which a long prompt given as {prompt} can reach.
const maxArgLen = 128 << 10

// UsageFunc reads an agent CLI's machine-readable output: the lines of its
// combined stdout and stderr that start with '{' or '[' (up to 1 MiB each),
// or, when there are none, its output as captured (head and tail). It
// returns the tokens the agent reports and its final message, "" if none;
// ok is false when the output holds no usage. The usage's CostUSD is the
// cost the agent reports; when it reports none, Unpriced holds all its
// tokens.
type UsageFunc func(output string) (u llm.Usage, final string, ok bool)

// proxyEnv is passed to every agent CLI: with the host's network they
// reach their model endpoint through the same proxy as statgraph; in a
// closed sandbox the bridge sets them to statgraph's allowlisting proxy
// instead (see verifier.Sandbox.AllowHosts).
var proxyEnv = []string{
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
	"http_proxy", "https_proxy", "no_proxy", "all_proxy",
}

// Execute runs the command once. A non-zero exit is not an error: the
// verifier decides whether the attempt worked; the summary says how the
// command ended. The error is an *InfraError when the agent cannot be
// started (not found, not executable) or crashed before it did anything
// (see Workspace), and another error when the command is empty or the
// prompt cannot be written.
func (c CommandExecutor) Execute(ctx context.Context, s TaskState) (string, error) {
	summary, _, err := c.ExecuteLog(ctx, s)
	return summary, err
}

// ExecuteLog is Execute that also returns the command's output as
// captured (head and tail, scrubbed of secrets), "" when it could not
// run; the orchestrator keeps its tail in the attempt's record.
func (c CommandExecutor) ExecuteLog(ctx context.Context, s TaskState) (summary, log string, err error) {
	summary, res, err := c.execute(ctx, s)
	return summary, res.Output, err
}

func (c CommandExecutor) execute(ctx context.Context, s TaskState) (string, verifier.Result, error) {
	var none verifier.Result
	if len(c.Argv) == 0 {
		return "", none, fmt.Errorf("command executor: empty command; set executor.command in tasks.json")
	}
	if err := c.Budget.Check(0); err != nil {
		return "", none, fmt.Errorf("command executor: %s not started: %w", c.Argv[0], err)
	}
	dir := c.PromptDir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "statgraph-prompts")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", none, fmt.Errorf("command executor: prompt directory: %w", err)
	}
	n := s.RetryCount + 1
	// The home first: the values of the credentials copied into it are
	// then scrubbed from the prompt too.
	sb, removeHome, err := c.sandbox(dir, n)
	if err != nil {
		return "", none, err
	}
	summary, res, err := c.attempt(ctx, s, dir, sb)
	if rerr := removeHome(); rerr != nil {
		// The copies of the agent's credentials must not outlive the attempt:
		// an attempt whose home stays fails (and the next run sweeps it).
		if err == nil {
			return "", res, rerr
		}
		err = errors.Join(err, rerr)
	}
	return summary, res, err
}

// attempt writes the prompt into dir and runs the agent CLI once in sb.
func (c CommandExecutor) attempt(ctx context.Context, s TaskState, dir string, sb *verifier.Sandbox) (string, verifier.Result, error) {
	var none verifier.Result
	n := s.RetryCount + 1
	text := secret.Scrub(llm.BuildExecutorPrompt(execRequest(s, 0)))
	prompt := filepath.Join(dir, fmt.Sprintf("task-%s-attempt-%d.md", s.Task.ID, n))
	if err := os.WriteFile(prompt, []byte(text), 0o600); err != nil {
		return "", none, fmt.Errorf("command executor: write prompt: %w", err)
	}
	workdir := c.Workdir
	if sb != nil { // the workspace may appear elsewhere inside (verifier.Sandbox.Root)
		workdir = sb.Inside(workdir)
	}
	repl := strings.NewReplacer("{prompt_file}", prompt, "{prompt}", text, "{workdir}", workdir, "{attempt}", strconv.Itoa(n), "{task_id}", s.Task.ID)
	argv := make([]string, len(c.Argv))
	for i, a := range c.Argv {
		argv[i] = repl.Replace(a)
		if len(argv[i]) >= maxArgLen {
			return "", none, fmt.Errorf("command executor: argument %d of %s is %d bytes with the prompt, more than one argument may hold (%d): "+
				"pass the prompt as {prompt_file} or with \"stdin\": true", i, c.Argv[0], len(argv[i]), maxArgLen-1)
		}
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultCommandTimeout
	}
	if err := c.Budget.Check(0); err != nil {
		return "", none, fmt.Errorf("command executor: %s not started: %w", argv[0], err)
	}
	return c.run(ctx, s, argv, text, timeout, c.tree(), sb)
}

// run runs the agent CLI once, with its arguments and prompt ready.
func (c CommandExecutor) run(ctx context.Context, s TaskState, argv []string, text string, timeout time.Duration, before string, sb *verifier.Sandbox) (string, verifier.Result, error) {
	n := s.RetryCount + 1
	cmd := verifier.Command{Argv: argv, Dir: c.Workdir, Timeout: timeout, Env: c.environ(), MaxOutput: 64 << 10, Sandbox: sb}
	var lines jsonLines
	if c.Usage != nil {
		cmd.Tee = &lines
	}
	if c.Stdin {
		cmd.Stdin = strings.NewReader(text)
	}
	ctx, end := obs.Start(ctx, "agent "+filepath.Base(argv[0]),
		obs.String("process.executable.name", filepath.Base(argv[0])),
		obs.String("statgraph.task.id", s.Task.ID), obs.Int("statgraph.attempt", n))
	runCtx, watch := ctx, (*liveWatch)(nil)
	if c.LiveLimit != nil {
		var stop context.CancelCauseFunc
		runCtx, stop = context.WithCancelCause(ctx)
		defer stop(nil)
		watch = &liveWatch{match: c.LiveLimit, stop: func() { stop(errLiveLimit) }}
		if cmd.Tee != nil {
			cmd.Tee = io.MultiWriter(cmd.Tee, watch)
		} else {
			cmd.Tee = watch
		}
	}
	res, err := verifier.Run(runCtx, cmd)
	done := []obs.Attr{obs.Int("process.exit.code", res.ExitCode), obs.Bool("statgraph.agent.timed_out", res.TimedOut),
		obs.Int("statgraph.agent.duration_ms", int(res.Duration.Milliseconds()))}
	final := ""
	if c.Usage != nil && err == nil {
		if u, f, ok := c.Usage(cmp.Or(lines.String(), res.Output)); ok {
			if u.Unpriced > 0 && c.Price != nil {
				u = c.Price.Cost(u)
			}
			c.Budget.AddRun(u)
			final = f
			// The tokens the CLI reports, named as a model call's are (GenAI conventions).
			done = append(done, llm.UsageAttrs(u)...)
		}
	}
	end(err, done...)
	if watch != nil && watch.line != "" && ctx.Err() == nil {
		return "", res, c.liveLimit(argv[0], watch.line, res.Output+"\n"+lines.String())
	}
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
			return "", res, &InfraError{Reason: fmt.Sprintf("agent CLI %s cannot be started: install it or put it on PATH, or fix executor in tasks.json", argv[0]) +
				withNote(sb.HiddenNote(argv[0], err.Error())), Err: err}
		}
		return "", res, fmt.Errorf("command executor: %w", err)
	}
	switch {
	case res.Canceled:
		return "", res, ctx.Err()
	case res.TimedOut:
		return fmt.Sprintf("%s timed out after %s", argv[0], timeout), res, nil
	case res.ExitCode != 0:
		if line := billingLine(res.Output); line != "" {
			return "", res, quotaError(argv[0], line)
		}
		if c.Limit != nil {
			if until, reason, ok := c.Limit(res.Output+"\n"+lines.String(), time.Now()); ok {
				return "", res, &llm.LimitError{Until: until, Reason: fmt.Sprintf("agent CLI %s: %s", argv[0], reason)}
			}
		}
		if ie := c.crashed(argv[0], res, before); ie != nil {
			ie.Reason += withNote(sb.HiddenNote(argv[0], res.Output))
			return "", res, ie
		}
		return fmt.Sprintf("%s exited with code %d: %s", argv[0], res.ExitCode, lastLine(res.Output)) + withNote(sb.HiddenNote(argv[0], res.Output)), res, nil
	}
	if l := lastLine(final); l != "" {
		return l, res, nil
	}
	if l := lastLine(res.Output); l != "" {
		return l, res, nil
	}
	return argv[0] + " finished", res, nil
}

// environ builds the entries the agent gets besides the allow-list.
func (c CommandExecutor) environ() []string {
	env := AgentEnviron()
	var out []string
	for _, e := range append(slices.Clone(proxyEnv), c.Env...) {
		if strings.Contains(e, "=") {
			out = append(out, e)
			continue
		}
		out = append(out, agentEnv(env, e)...)
	}
	return out
}

func (c CommandExecutor) tree() string {
	if c.Workspace == nil {
		return ""
	}
	h, err := c.Workspace.TreeHash()
	if err != nil {
		return ""
	}
	return h
}

// crashed returns an *InfraError when a run that exited non-zero looks
// like the agent never got going: nothing changed in the workspace, and it
// ended within the crash window or printed a fatal error (bad key, model
// server unreachable).
func (c CommandExecutor) crashed(program string, res verifier.Result, before string) *InfraError {
	if c.Workspace == nil || before == "" || c.tree() != before {
		return nil
	}
	window := c.CrashWindow
	if window <= 0 {
		window = DefaultCrashWindow
	}
	fatal := fatalLine(res.Output)
	if res.Duration > window && fatal == "" {
		return nil
	}
	why := fatal
	if why == "" {
		why = lastLine(res.Output)
	}
	return &InfraError{Reason: fmt.Sprintf("agent CLI %s failed on start: %s (exit code %d after %s, nothing changed); "+
		"check its installation, key and model endpoint by running it by hand in the workspace", program, why, res.ExitCode, res.Duration.Round(time.Millisecond))}
}

// withNote returns "; note: " and note, or "" for no note.
func withNote(note string) string {
	if note == "" {
		return ""
	}
	return "; note: " + note
}

// fatalMarkers are lower-case fragments of the errors agent CLIs print when
// their setup is wrong rather than the task hard.
var fatalMarkers = []string{
	"api key", "api_key", "apikey", "unauthorized", "authentication", "invalid x-api-key",
	"forbidden", "econnrefused", "connection refused", "enotfound", "could not resolve host",
	"no such host", "network is unreachable", "command not found", "cannot find module",
	"please login", "not logged in", "please log in", "quota", "connection error", "fetch failed",
}

// fatalLine returns the first output line holding a fatal marker, or "".
func fatalLine(out string) string {
	for l := range strings.Lines(out) {
		low := strings.ToLower(l)
		for _, m := range fatalMarkers {
			if strings.Contains(low, m) {
				return lastLine(l)
			}
		}
	}
	return ""
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
