package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/queue"
	"github.com/statgraph/statgraph/tasks"
	"github.com/statgraph/statgraph/verifier"
	"golang.org/x/term"
)

// common holds the flags shared by the commands that read a tasks file.
type common struct {
	tag, store, repo string
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.tag, "tag", "", "claude-task-master tag to use in a tagged tasks file (default master)")
	fs.StringVar(&c.store, "store", "", "run store: SQLite file with checkpoints and history (default: the plan's runs.db under $STATGRAPH_HOME, see docs/state-and-recovery.md)")
	fs.StringVar(&c.repo, "repo", "", "git repository the tasks change (default: the tasks file's directory)")
}

// paths resolves the tasks file, its plan (repository, tag and the state
// kept outside the repository) and the run store.
func (c *common) paths(pos []string) (file string, plan dispatch.Plan, store string, err error) {
	file = "tasks.json"
	if len(pos) > 0 {
		file = pos[0]
	}
	plan, store, err = control.Paths(file, c.tag, c.repo, c.store)
	return file, plan, store, err
}

// load reads and validates the tasks file; problems are usage errors, and
// the warnings of a valid file go to stderr (one list, after a heading).
func load(file, tag string, stderr io.Writer) (*tasks.File, error) {
	f, err := tasks.Load(file, tag)
	var ve *tasks.ValidationError
	switch {
	case errors.As(err, &ve):
		n := fmt.Sprintf("%d problems", len(ve.Problems))
		if len(ve.Problems) == 1 {
			n = "1 problem"
		}
		msg := fmt.Sprintf("%s is not valid (%s); nothing was changed:\nerrors:\n%s", file, n, problemList(ve.Problems))
		if len(ve.Warnings) > 0 {
			msg += "\n" + warningList(ve.Warnings)
		}
		return nil, usageError{msg}
	case errors.Is(err, os.ErrNotExist):
		return nil, usagef("%s: no such file; give the path of your tasks.json (see examples/quickstart)", file)
	case err != nil:
		return nil, usageError{err.Error()}
	}
	if len(f.Warnings) > 0 {
		fmt.Fprintf(stderr, "statgraph: %s\n", warningList(f.Warnings))
	}
	return f, nil
}

// goCacheProgCmd is the hidden command by which the statgraph binary serves
// the sandbox's layered go build cache.
const goCacheProgCmd = "gocacheprog"

// problemList shows problems one per line, indented.
func problemList(ps []tasks.Problem) string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = "  " + p.String()
	}
	return strings.Join(lines, "\n")
}

// warningList shows warnings under a heading that counts them.
func warningList(ws []tasks.Problem) string {
	head := fmt.Sprintf("%d warnings (these tasks are not run or are blocked; the others run):", len(ws))
	if len(ws) == 1 {
		head = "1 warning (the task is not run or is blocked; the others run):"
	}
	return head + "\n" + problemList(ws)
}

func cmdRun(ctx context.Context, name string, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags(name, stderr)
	var c common
	c.register(fs)
	var rf runFlags
	rf.register(fs)
	plain := fs.Bool("plain", false, "print plain progress lines even on a terminal")
	asJSON := fs.Bool("json", false, "at the end, print one JSON object per task on stdout instead of the summary table")
	retryFailed := fs.Bool("retry-failed", false, "send failed and blocked tasks back to pending first, so they run again (their history stays in the run store)")
	waitAnswers := fs.Bool("wait-for-answers", false, "without a terminal, a task with on_exhausted \"ask\" waits for an answer given through statgraph serve or mcp (default: it ends interrupted); with a terminal it can always be answered there too")
	integrate := fs.String("integrate", "", "when the run ends, merge every done task's branch into `BRANCH`, run the default checks on it and publish it")
	landOnto := fs.String("land", "", "when the run ends, land the done tasks on `BRANCH` one at a time, each merge checked (as statgraph land --onto BRANCH)")
	var q queueFlags
	q.register(fs)
	pos, err := parse(fs, args, 1)
	if err != nil {
		return exitUsage, err
	}
	ro, err := rf.options()
	if err != nil {
		return exitUsage, err
	}
	file, plan, store, err := c.paths(pos)
	if err != nil {
		return exitUsage, usageError{err.Error()}
	}
	repo := plan.Repo
	if q.url == "" && q.remote != "" {
		return exitUsage, usagef("--remote needs --queue: a local run publishes into the repository itself")
	}
	// Progress goes to stderr, so that stdout holds only the summary (or
	// the --json output) and can be piped.
	tty := false
	size := func() (int, int) { return 80, 24 }
	if f, ok := stderr.(*os.File); ok && !*plain && liveTable(f, os.Getenv) {
		tty, size = true, termSize(f)
	}
	p := newProgress(stderr, tty, size)
	tp, flush := tracingFromEnv(ctx, os.Getenv, stderr)
	defer flush()
	ro.Tracer, ro.Log = tp, p.logWriter()
	// Prepare takes the plan's lock, loads the file, checks the repository
	// and the state paths, then (for a run here; with --queue the workers
	// check their own) the sandbox and the setup (model, key, agent CLIs),
	// before anything is written, and settles the last run's results
	// journal (it was killed) so that --retry-failed sees it: as a run
	// started by serve or mcp does.
	prep, err := control.Prepare(ctx, control.PrepareOptions{
		File: file, Tag: c.tag, Plan: plan, StorePath: store, Run: ro,
		RetryFailed: *retryFailed, OnWorkers: q.url != "",
		Load: func(file, tag string) (*tasks.File, error) { return load(file, tag, stderr) },
	})
	if err != nil {
		return exitCode(err), err
	}
	defer prep.Close()
	if *landOnto != "" {
		// Said now, not after the run: a branch that cannot be landed on
		// is a mistake in the command.
		if err := dispatch.CheckLandTarget(ctx, repo, *landOnto); err != nil {
			return exitUsage, usageError{err.Error()}
		}
	}
	reportReset(stderr, prep.Reset)
	warnUncommitted(stderr, repo, file)

	// The first Ctrl-C or SIGTERM cancels the run: model calls in flight
	// and running commands (whole process groups) stop now, the units are
	// marked interrupted and tasks.json is saved; resume repeats the
	// cancelled step. A second one exits at once, as a kill would.
	ctx, stop := context.WithCancelCause(ctx)
	cancel := func() { stop(nil) }
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	// The process exits right after the run: a signal arriving from here
	// on is ignored, so that it cannot turn the exit code (130 after a
	// Ctrl-C) into a death by signal.
	defer signal.Ignore(os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(done)
	wg.Go(func() {
		select {
		case <-sigs:
		case <-done:
			return
		}
		p.notice("stopping: cancelling model calls and commands, saving tasks.json (Ctrl-C again to exit at once)…")
		cancel()
		select {
		case <-sigs:
			fmt.Fprintln(stderr, "statgraph: exiting at once; run `statgraph resume` to continue")
			os.Exit(exitInterrupted)
		case <-done:
		}
	})

	d := prep.Dispatcher
	d.Report = prep.Notifier.Report(p.event)
	if q.url == "" && q.workerTimeout != 0 {
		return exitUsage, usagef("--worker-timeout needs --queue: a local run has no workers to wait for")
	}
	if q.url != "" {
		closeQueue, err := q.coordinate(ctx, d, plan, file, ro, stop)
		if err != nil {
			return exitFailed, err
		}
		defer closeQueue()
	}
	// An escalation is asked on the terminal, if any, and as a question
	// file that statgraph serve and mcp show and answer: the first answer
	// wins.
	switch remote := control.RemoteAsk(plan); {
	case isTerminal(os.Stdin):
		d.Ask = control.FirstAnswer(askOnTerminal(p, os.Stdin), remote)
	case *waitAnswers:
		d.Ask = remote
	}
	p.start()
	began := time.Now()
	sum, err := d.Run(ctx)
	p.stop()
	if cause := context.Cause(ctx); errors.Is(cause, queue.ErrNoWorker) {
		err = cause
	}
	prep.Notifier.End(sum, err, time.Since(began))
	if *asJSON {
		if err := printSummaryJSON(stdout, sum); err != nil {
			return exitFailed, err
		}
	} else {
		width := 0
		if f, ok := stdout.(*os.File); ok && isTerminal(f) {
			width, _ = termSize(f)()
		}
		printSummary(stdout, sum, width)
	}
	integrationFailed := false
	if *integrate != "" && err == nil {
		in, ierr := d.Integrate(ctx, *integrate)
		printIntegration(stdout, in)
		if ierr != nil {
			return exitFailed, ierr
		}
		integrationFailed = in.Failed()
	}
	landFailed := false
	if *landOnto != "" && err == nil {
		code, lerr := land(ctx, d, *landOnto, stdout)
		if lerr != nil || code == exitInterrupted {
			return code, lerr
		}
		landFailed = code != exitOK
	}
	switch {
	case errors.Is(err, queue.ErrNoWorker):
		fmt.Fprintf(stderr, "statgraph: interrupted: %v\n", err)
		return exitInterrupted, nil
	case errors.Is(err, dispatch.ErrStopped) || errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "statgraph: interrupted; run `statgraph resume` to continue")
		return exitInterrupted, nil
	case errors.Is(err, verifier.ErrSandboxUnavailable):
		return exitUsage, usageError{err.Error()}
	case err != nil:
		return exitFailed, err
	case sum.Failed() || integrationFailed || landFailed:
		return exitFailed, nil
	}
	return exitOK, nil
}

// warnUncommitted warns on w when the repository at repo has changes that
// are not in its HEAD commit, which the tasks start from. The tasks file
// and its lock, which statgraph writes, are not counted. When git cannot tell (no
// git program, an unreadable repository) it says nothing: the warning is
// advice, and the checks before and after it report real problems.
func warnUncommitted(w io.Writer, repo, file string) {
	paths, err := workspace.Uncommitted(context.Background(), repo)
	if err != nil {
		return
	}
	self := ""
	if abs, err := filepath.Abs(file); err == nil {
		if absRepo, err := filepath.Abs(repo); err == nil {
			self, _ = filepath.Rel(absRepo, abs)
		}
	}
	var names []string
	for _, p := range paths {
		if p := filepath.FromSlash(p); p != self && p != self+".lock" {
			names = append(names, p)
		}
	}
	if len(names) == 0 {
		return
	}
	list := strings.Join(names, ", ")
	if len(names) > 5 {
		list = strings.Join(names[:5], ", ") + fmt.Sprintf(" and %d more", len(names)-5)
	}
	fmt.Fprintf(w, "statgraph: warning: %d uncommitted change(s) in %s will not be seen by the tasks, which start from the HEAD commit: %s; "+
		"commit them first (git add -A && git commit) if the tasks need them\n", len(names), repo, list)
}

// isTerminal reports whether v is an *os.File open on a terminal, by an
// isatty check (a tcgetattr ioctl): /dev/null and other character devices
// that are not terminals do not count, so `statgraph run </dev/null` never
// waits for an answer that cannot come.
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
