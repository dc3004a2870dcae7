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
	plain := fs.Bool("plain", false, "print plain log lines even on a terminal")
	keep := fs.Bool("keep-workspaces", false, "keep each finished task's workspace (default: removed once its branch is published)")
	integrate := fs.String("integrate", "", "when the run ends, merge every done task's branch into `BRANCH`, run the default checks on it and publish it")
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
	stop := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		n := 0
		for range sigs {
			n++
			if n == 1 {
				fmt.Fprintln(stderr, "\nstopping after the running steps (Ctrl-C again to stop at once)…")
				close(stop)
				continue
			}
			cancel()
			return
		}
	}()

	tty := isTerminal(stdout) && !*plain
	p := newProgress(stdout, tty)
	d := &tasks.Dispatcher{
		File: f, Repo: repo, Checkpointer: st, Jobs: *jobs, Model: mc,
		Report: p.event, Stop: stop, Log: p.logWriter(), KeepWorkspaces: *keep,
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
	printSummary(stdout, sum)
	integrationFailed := false
	if *integrate != "" && err == nil {
		in, ierr := d.Integrate(ctx, *integrate)
		printIntegration(stdout, in)
		if ierr != nil {
			return exitFailed, ierr
		}
		integrationFailed = in.Failed()
	}
	switch {
	case errors.Is(err, tasks.ErrStopped) || errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "statgraph: interrupted; run `statgraph resume` to continue")
		return exitInterrupted, nil
	case err != nil:
		return exitFailed, err
	case sum.Failed() || integrationFailed:
		return exitFailed, nil
	}
	return exitOK, nil
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
