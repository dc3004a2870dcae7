package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/agents/workspace"
	"github.com/statgraph/statgraph/internal/printable"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/tasks"
)

func cmdValidate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("validate", stderr)
	tag := fs.String("tag", "", "claude-task-master tag to use in a tagged tasks file (default master)")
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	file := "tasks.json"
	if len(pos) > 0 {
		file = pos[0]
	}
	f, err := load(file, *tag, io.Discard)
	if err != nil {
		return err
	}
	units := f.Units()
	fmt.Fprintf(stdout, "%s is valid: %d tasks, %d runnable units\n", file, len(f.Tasks), len(units))
	if len(f.Warnings) > 0 {
		fmt.Fprintln(stdout, warningList(f.Warnings))
	}
	return nil
}

// readerGraph compiles the orchestrator graph only to read a run store.
func readerGraph(cp statgraph.Checkpointer) (*statgraph.Graph[agents.TaskState], error) {
	nop := agents.ExecutorFunc(func(context.Context, agents.TaskState) (string, error) { return "", nil })
	ver := agents.VerifierFunc(func(context.Context, agents.TaskState) (agents.Verification, error) {
		return agents.Verification{}, nil
	})
	return agents.NewGraph(agents.Config{Executor: nop, Verifier: ver}, statgraph.WithCheckpointer(cp))
}

func cmdStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("status", stderr)
	var c common
	c.register(fs)
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	file, _, store := c.paths(pos)
	f, err := load(file, c.tag, stderr)
	if err != nil {
		return err
	}
	var g *statgraph.Graph[agents.TaskState]
	if _, err := os.Stat(store); err == nil {
		st, err := openStore(ctx, store)
		if err != nil {
			return err
		}
		defer st.Close()
		if g, err = readerGraph(st); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSTATUS\tPHASE\tATTEMPTS\tTOKENS\tTITLE\tNOTE")
	for _, u := range f.Units() {
		t, _ := f.Task(u.ID)
		status, phase, tokens := t.Status, "-", "-"
		if status == "" {
			status = tasks.StatusPending
		}
		if g != nil {
			if snap, err := g.State(ctx, tasks.Thread(u.ID)); err == nil {
				phase, tokens = snap.State.Phase, fmt.Sprint(snap.State.Tokens)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\n", printable.String(u.ID), status, phase, t.RetryCount, t.Retries(), tokens, clip(t.Title, 40), clip(t.StatusReason, 60))
	}
	return tw.Flush()
}

func cmdHistory(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("history", stderr)
	var c common
	c.register(fs)
	file := fs.String("file", "tasks.json", "the tasks file")
	noDiff := fs.Bool("no-diff", false, "do not print the diff")
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("history: give one task id, e.g. statgraph history 3")
	}
	id := pos[0]
	_, repo, store := c.paths([]string{*file})
	if _, err := os.Stat(store); err != nil {
		return usagef("no run store at %s: nothing has run yet (or pass --store)", store)
	}
	st, err := openStore(ctx, store)
	if err != nil {
		return err
	}
	defer st.Close()
	g, err := readerGraph(st)
	if err != nil {
		return err
	}
	snap, err := g.State(ctx, tasks.Thread(id))
	if errors.Is(err, statgraph.ErrNoCheckpoint) {
		return usagef("task %s has no recorded run in %s", id, store)
	}
	if err != nil {
		return err
	}
	s := snap.State
	var ws *workspace.Workspace
	if dir := filepath.Join(filepath.Dir(store), "work", id); !*noDiff {
		if _, err := os.Stat(dir); err == nil {
			if ws, err = workspace.Prepare(ctx, workspace.Options{Source: repo, TaskID: id, Root: filepath.Dir(dir)}); err != nil {
				return fmt.Errorf("open workspace of task %s: %w", id, err)
			}
			defer ws.Close()
		}
	}
	fmt.Fprintf(stdout, "task %s: %s\nphase %s, %d verification(s) of %d, %d tokens\n", printable.String(id), printable.String(s.Task.Title), s.Phase, s.RetryCount, s.MaxRetries, s.Tokens)
	if s.Plan.Summary != "" {
		fmt.Fprintf(stdout, "plan: %s\n", printable.String(s.Plan.Summary))
		for _, step := range s.Plan.Steps {
			fmt.Fprintf(stdout, "  - %s\n", printable.String(step))
		}
	}
	for _, a := range s.Attempts {
		verdict := "FAILED"
		if a.Passed {
			verdict = "passed"
		}
		fmt.Fprintf(stdout, "\nattempt %d  %s  %s  commit %s\n  %s\n", a.N, verdict, a.Duration, short(a.Commit), printable.String(a.Summary))
		if a.NoProgress {
			fmt.Fprintln(stdout, "  no progress: the attempt changed nothing")
		}
		for _, e := range a.Errors {
			fmt.Fprintf(stdout, "  error: %s\n", printable.String(e))
		}
		if ws != nil && a.Commit != "" {
			if d, err := ws.DiffCommit(ctx, a.Commit); err == nil && d != "" {
				fmt.Fprintf(stdout, "  diff of this attempt:\n%s\n", indent(d, "    "))
			}
		}
		if a.Feedback != "" {
			fmt.Fprintf(stdout, "  feedback sent back:\n%s\n", indent(a.Feedback, "    "))
		}
	}
	if len(s.ErrorHistory) > 0 {
		fmt.Fprintf(stdout, "\nerror_history:\n")
		for _, h := range s.ErrorHistory {
			fmt.Fprintf(stdout, "  %s\n", printable.String(h))
		}
	}
	if ws == nil {
		return nil
	}
	diff, err := ws.Diff(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\ndiff of branch %s against its base:\n%s", ws.Branch(), diff)
	return nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	if h == "" {
		return "-"
	}
	return h
}

func indent(s, pre string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = pre + l
	}
	return strings.Join(lines, "\n")
}

func cmdGraph(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("graph", stderr)
	format := fs.String("format", "mermaid", "mermaid or dot")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	g, err := readerGraph(statgraph.NewMemoryCheckpointer())
	if err != nil {
		return err
	}
	switch *format {
	case "mermaid":
		fmt.Fprint(stdout, g.Mermaid())
	case "dot":
		fmt.Fprint(stdout, g.DOT())
	default:
		return usagef("graph: unknown format %q; use mermaid or dot", *format)
	}
	return nil
}
