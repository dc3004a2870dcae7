package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/tasks"
)

// common holds the flags shared by the commands that read a tasks file.
type common struct {
	tag, store, repo string
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.tag, "tag", "", "claude-task-master tag to use in a tagged tasks file (default master)")
	fs.StringVar(&c.store, "store", "", "run store: SQLite file with checkpoints and history (default <repo>/.statgraph/runs.db)")
	fs.StringVar(&c.repo, "repo", "", "git repository the tasks change (default: the tasks file's directory)")
}

// paths resolves the tasks file, repository and store.
func (c *common) paths(pos []string) (file, repo, store string) {
	file = "tasks.json"
	if len(pos) > 0 {
		file = pos[0]
	}
	repo = c.repo
	if repo == "" {
		repo = filepath.Dir(file)
	}
	store = c.store
	if store == "" {
		store = filepath.Join(repo, ".statgraph", "runs.db")
	}
	return file, repo, store
}

// load reads and validates the tasks file; problems are usage errors.
func load(file, tag string) (*tasks.File, error) {
	f, err := tasks.Load(file, tag)
	var ve *tasks.ValidationError
	switch {
	case errors.As(err, &ve):
		n := fmt.Sprintf("%d problems", len(ve.Problems))
		if len(ve.Problems) == 1 {
			n = "1 problem"
		}
		return nil, usageError{fmt.Sprintf("%s is not valid (%s); nothing was changed:\n%s", file, n, ve.Error())}
	case errors.Is(err, os.ErrNotExist):
		return nil, usagef("%s: no such file; give the path of your tasks.json (see examples/quickstart)", file)
	case err != nil:
		return nil, usageError{err.Error()}
	}
	return f, nil
}

func openStore(ctx context.Context, path string) (*sqlite.Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("run store: %w", err)
	}
	return sqlite.Open(ctx, path)
}

func cmdRun(ctx context.Context, name string, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags(name, stderr)
	var c common
	c.register(fs)
	jobs := fs.Int("j", 0, "tasks to run at once (default: number of CPUs)")
	model := fs.String("model", "", "model name for the LLM planner and executor (default $STATGRAPH_MODEL)")
	budget := fs.Int("budget", 0, "global token budget for the whole run (0 = unlimited)")
	plain := fs.Bool("plain", false, "print plain progress lines even on a terminal")
	asJSON := fs.Bool("json", false, "at the end, print one JSON object per task on stdout instead of the summary table")
	allowEnv := fs.String("allow-env", "", "comma-separated environment variables to pass to agent CLIs (e.g. ANTHROPIC_API_KEY); checks never see them")
	pos, err := parse(fs, args, 1)
	if err != nil {
		return exitUsage, err
	}
	file, repo, store := c.paths(pos)
	f, err := load(file, c.tag)
	if err != nil {
		return exitUsage, err
	}
	// Check the repository before anything is written: tasks start from
	// its HEAD commit, each on its own branch.
	if _, err := workspace.CheckSource(repo); err != nil {
		abs, _ := filepath.Abs(repo)
		switch {
		case errors.Is(err, workspace.ErrNotRepository):
			return exitUsage, usagef("%s is not the top directory of a git repository: statgraph works on per-task branches of your repository; "+
				"run git init, add and commit your files there, or pass --repo DIR", abs)
		case errors.Is(err, workspace.ErrNoCommit):
			return exitUsage, usagef("the repository %s has no commit yet: tasks start from its HEAD commit; commit your files first (git add -A && git commit -m init)", abs)
		}
		return exitUsage, usageError{err.Error()}
	}
	lock, err := tasks.Lock(file)
	if err != nil {
		return exitUsage, usageError{err.Error()}
	}
	defer lock.Unlock()
	warnUncommitted(stderr, repo, file)
	st, err := openStore(ctx, store)
	if err != nil {
		return exitFailed, err
	}
	defer st.Close()

	mc := llm.ConfigFromEnv()
	if *model != "" {
		mc.Model = *model
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Progress goes to stderr, so that stdout holds only the summary (or
	// the --json output) and can be piped.
	tty := false
	size := func() (int, int) { return 80, 24 }
	if f, ok := stderr.(*os.File); ok && !*plain && liveTable(f, os.Getenv) {
		tty, size = true, termSize(f)
	}
	p := newProgress(stderr, tty, size)
	stop := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		n := 0
		for range sigs {
			n++
			if n == 1 {
				p.notice("stopping after the running steps (Ctrl-C again to stop at once)…")
				close(stop)
				continue
			}
			cancel()
			return
		}
	}()

	d := &tasks.Dispatcher{
		File: f, Repo: repo, Checkpointer: st, Jobs: *jobs, Model: mc,
		Report: p.event, Stop: stop, Log: p.logWriter(),
	}
	for _, name := range strings.Split(*allowEnv, ",") {
		if name = strings.TrimSpace(name); name != "" {
			d.AllowEnv = append(d.AllowEnv, name)
		}
	}
	if *budget > 0 {
		d.Budget = llm.NewBudget(*budget, nil)
	}
	if isTerminal(os.Stdin) {
		d.Ask = askOnTerminal(p, os.Stdin)
	}
	p.start()
	sum, err := d.Run(ctx)
	p.stop()
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
	switch {
	case errors.Is(err, tasks.ErrStopped) || errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "statgraph: interrupted; run `statgraph resume` to continue")
		return exitInterrupted, nil
	case err != nil:
		return exitFailed, err
	case sum.Failed():
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

// askOnTerminal asks the operator what to do with a task that ran out of
// retries.
func askOnTerminal(p *progress, in io.Reader) func(context.Context, string, agents.Escalation) (string, error) {
	r := bufio.NewReader(in)
	return func(ctx context.Context, unit string, e agents.Escalation) (string, error) {
		answer := p.ask(func(w io.Writer) string {
			fmt.Fprintf(w, "\ntask %s (%s) failed %d attempts. Last errors:\n", unit, e.Title, e.Attempts)
			for _, l := range e.Errors {
				fmt.Fprintf(w, "  - %s\n", l)
			}
			for {
				fmt.Fprint(w, "[r]etry (reset the attempts), [s]kip (mark done with a warning), [a]bort (mark failed)? ")
				line, err := r.ReadString('\n')
				switch strings.ToLower(strings.TrimSpace(line)) {
				case "r", "retry":
					return "retry"
				case "s", "skip":
					return "skip"
				case "a", "abort":
					return "abort"
				}
				if err != nil {
					return "abort"
				}
			}
		})
		return answer, ctx.Err()
	}
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
