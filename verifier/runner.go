package verifier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/statgraph/statgraph/internal/proc"
	"github.com/statgraph/statgraph/internal/secret"
)

// Defaults applied when the corresponding Command field is zero.
const (
	DefaultGrace     = 2 * time.Second
	DefaultMaxOutput = 1 << 20
)

// Errors returned by Run for a Command that cannot be run as given.
var (
	// ErrNoCommand: neither Argv nor Shell is set.
	ErrNoCommand = errors.New("verifier: command has neither Argv nor Shell; set one of them")
	// ErrTwoCommands: both Argv and Shell are set, so it is unclear which to run.
	ErrTwoCommands = errors.New("verifier: command has both Argv and Shell; set only one of them")
)

// Command describes one process to run. The zero value is not runnable: set
// exactly one of Argv or Shell. It is also what a command field of
// tasks.json (test_cmd, lint_cmd, setup_cmd, a check's cmd) decodes to: a
// string is Shell, an array of strings is Argv; the zero Command means the
// field is absent.
type Command struct {
	// Argv is the program and its arguments, run directly without a shell.
	Argv []string
	// Shell is an operator-configured shell script run as `sh -c Shell`. It
	// must come from the operator's configuration and never be built from
	// model output; use Argv for anything else.
	Shell string
	// Dir is the working directory; empty means the current directory.
	Dir string
	// Timeout bounds the run; zero means no timeout (ctx still applies).
	Timeout time.Duration
	// Grace is how long the process group gets between SIGTERM and SIGKILL
	// on timeout or cancellation, and how long Run waits for output from
	// processes that escaped the group; zero means DefaultGrace (2 s).
	Grace time.Duration
	// Env holds extra KEY=VALUE entries. They are passed as given, after and
	// overriding the inherited ones, secret-looking names included: the
	// caller put them there on purpose.
	Env []string
	// AllowEnv names parent environment variables that are passed through
	// even though they are outside the allow-list or look like secrets.
	// Their values are looked up with secret.Lookup, so a secret statgraph
	// took out of its own environment at start-up still reaches the child.
	AllowEnv []string
	// MaxOutput caps the captured combined output in bytes, keeping the
	// first and last halves; zero means DefaultMaxOutput (1 MiB).
	MaxOutput int
	// Stdin is the process's standard input; nil means /dev/null.
	Stdin io.Reader
	// Tee, if set, receives every byte of the combined output, including
	// what the cap drops, from a single goroutine. A Tee write error stops
	// further writes to Tee but not the capture.
	Tee io.Writer
	// Sandbox, if set, runs the command confined by bubblewrap as the
	// Sandbox type describes; nil runs it unconfined.
	Sandbox *Sandbox
}

// IsZero reports whether c names no program (neither Argv nor Shell).
func (c Command) IsZero() bool { return c.Shell == "" && len(c.Argv) == 0 }

// String shows the command as a person would type it: Shell, else Argv
// joined by spaces.
func (c Command) String() string {
	if c.Shell != "" {
		return c.Shell
	}
	return strings.Join(c.Argv, " ")
}

// Result is the outcome of a command that started.
type Result struct {
	// ExitCode is the process's exit status, or -1 when it was ended by a
	// signal (as on timeout or cancellation).
	ExitCode int
	// Output is the combined stdout and stderr, capped at MaxOutput: when
	// bytes were dropped from the middle a marker line says how many. Every
	// registered secret and its encodings are replaced (see secret.Scrub).
	Output string
	// Dropped counts the output bytes left out of Output.
	Dropped int64
	// Duration is the wall time from start until the output was collected.
	Duration time.Duration
	// TimedOut reports that Command.Timeout ended the process group.
	TimedOut bool
	// Canceled reports that the caller's ctx (canceled, or past its own
	// deadline) ended the process group.
	Canceled bool
}

// Run runs c in its own process group and waits for it. On timeout or when
// ctx is done the whole group gets SIGTERM and, after Grace, SIGKILL; when the
// main process ends, any process left in its group is killed, so nothing Run
// starts outlives it; for a sandboxed command Run also waits (at most 30 s)
// until every process of its PID namespace has exited. A sandboxed command
// is put under its Sandbox's Limits (proc.Confine) and proc.SeccompFilter
// before anything of it runs. A non-zero exit, a timeout and a cancellation
// are reported in the Result with a nil error; the error is non-nil only
// when the command is malformed or cannot be started (it names the program
// and why; for a sandboxed command whose sandbox cannot be set up or
// bounded it wraps ErrSandboxUnavailable). The child's environment is
// filtered as described in FilterEnv; the captured Output is scrubbed of
// secrets (Tee gets the raw bytes). Run is safe for concurrent use.
func Run(ctx context.Context, c Command) (Result, error) {
	argv, err := c.argv()
	if err != nil {
		return Result{}, err
	}
	grace := c.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	runCtx := ctx
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}

	pr, pw, err := os.Pipe()
	if err != nil {
		return Result{}, fmt.Errorf("verifier: cannot start %s: creating output pipe: %w", argv[0], err)
	}
	defer pr.Close()

	env := proc.InheritedEnv(c.AllowEnv)
	// For a sandboxed command: bwrap names the first process of the
	// command's PID namespace on info, so that Run can bound it and wait
	// for the namespace to empty; it holds that process until a byte
	// arrives on block, and reads the seccomp filter from filter.
	var infoR, blockW *os.File
	var bwrapFiles []*os.File
	if c.Sandbox != nil {
		var senv []string
		if argv, senv, err = c.Sandbox.wrap(argv, c.Dir); err != nil {
			pw.Close()
			return Result{}, err
		}
		env = append(env, senv...)
		if bwrapFiles, infoR, blockW, err = sandboxFiles(); err != nil {
			pw.Close()
			return Result{}, fmt.Errorf("verifier: %w: cannot start %s: %v", ErrSandboxUnavailable, argv[0], err)
		}
		defer infoR.Close()
		defer blockW.Close()
		argv = withBounds(withInfoFD(argv))
	}
	cmd := exec.CommandContext(runCtx, argv[0], argv[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = append(env, c.Env...)
	cmd.Stdin = c.Stdin
	cmd.Stdout = pw
	cmd.Stderr = pw
	cmd.ExtraFiles = bwrapFiles
	// The group's WaitDelay bounds Wait after cancellation: if the leader
	// ignores SIGTERM it is killed, and a Stdin copier blocked on a stuck
	// process is released.
	group := &proc.Group{Grace: grace, KillLeftovers: true}
	group.Setup(cmd)

	start := time.Now()
	err = cmd.Start()
	for _, f := range bwrapFiles {
		f.Close() // bwrap holds its own copies
	}
	if err != nil {
		pw.Close()
		return Result{}, fmt.Errorf("verifier: cannot start %q in %s: %w", argv[0], dirName(c.Dir), err)
	}
	pw.Close() // The children hold their own copies; EOF comes when all are gone.
	var ns *pidNamespace
	if infoR != nil {
		ns = followNamespace(infoR)
	}

	out := proc.NewCapBuffer(c.maxOutput())
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		copyOutput(out, c.Tee, pr)
	}()

	// Nothing of a sandboxed command runs before it is bounded: should
	// that fail, bwrap is killed while it holds the namespace's first
	// process and Run reports why.
	var release func() error
	var confineErr error
	if ns != nil {
		if release, confineErr = confine(ns, c.Sandbox.Limits, blockW); confineErr != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}

	_ = cmd.Wait() // The exit status is read from ProcessState below.
	// Leftovers of this command (background jobs, orphaned grandchildren)
	// are killed.
	group.End()
	if ns != nil {
		// A stopped bwrap leaves its namespace to be killed; the check's
		// processes are all gone when Run returns.
		ns.end(nsDrain)
	}
	if release != nil {
		// A cgroup that cannot be removed now (a process still exiting
		// after 5 s) is removed by the next statgraph that uses its parent.
		_ = release()
	}
	select {
	case <-copied:
	case <-time.After(grace):
		// A process that left the group still holds the pipe; stop reading.
		pr.Close()
		<-copied
	}
	if confineErr != nil && !group.Signalled() {
		return Result{}, fmt.Errorf("verifier: %w: cannot bound %q before it runs: %v (bwrap's output: %q); "+
			"`statgraph sandbox check` shows what this machine can enforce, --no-sandbox runs checks and agent CLIs unprotected",
			ErrSandboxUnavailable, c.String(), confineErr, headTail(secret.Scrub(out.String()), 500))
	}

	res := Result{
		ExitCode: cmd.ProcessState.ExitCode(),
		Output:   secret.Scrub(c.Sandbox.dropNoise(out.String())),
		Dropped:  out.Dropped(),
		Duration: time.Since(start),
	}
	if group.Signalled() {
		if ctx.Err() != nil {
			res.Canceled = true
		} else {
			res.TimedOut = true
		}
	}
	return res, nil
}

// argv returns the program and arguments to execute.
func (c Command) argv() ([]string, error) {
	switch {
	case len(c.Argv) > 0 && c.Shell != "":
		return nil, ErrTwoCommands
	case len(c.Argv) > 0:
		if c.Argv[0] == "" {
			return nil, fmt.Errorf("%w (Argv[0] is empty)", ErrNoCommand)
		}
		return c.Argv, nil
	case c.Shell != "":
		return []string{"/bin/sh", "-c", c.Shell}, nil
	default:
		return nil, ErrNoCommand
	}
}

func (c Command) maxOutput() int {
	if c.MaxOutput <= 0 {
		return DefaultMaxOutput
	}
	return c.MaxOutput
}

func dirName(dir string) string {
	if dir == "" {
		return "the current directory"
	}
	return dir
}

// copyBufs recycles copyOutput's read buffers between runs.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// copyOutput copies r into out and, until it fails, into tee.
func copyOutput(out *proc.CapBuffer, tee io.Writer, r io.Reader) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	for {
		n, err := r.Read(buf)
		if n > 0 {
			out.Write(buf[:n])
			if tee != nil {
				if _, werr := tee.Write(buf[:n]); werr != nil {
					tee = nil
				}
			}
		}
		if err != nil {
			return
		}
	}
}
