package main

import (
	"context"
	"encoding/json"
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
	asJSON := fs.Bool("json", false, "print one JSON object per task instead of the table")
	queueURL := fs.String("queue", "", queueReadUsage)
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	file, plan, store, err := c.paths(pos)
	if err != nil {
		return usageError{err.Error()}
	}
	f, err := load(file, c.tag, stderr)
	if err != nil {
		return err
	}
	// Outcomes a run made durable only in its results journal (it is going
	// on, or was killed) count: applied in memory, nothing is written.
	if _, err := tasks.ApplyJournal(f, plan); err != nil {
		return err
	}
	var g *statgraph.Graph[agents.TaskState]
	st, err := openRunStore(ctx, *queueURL, store, plan)
	if err != nil && *queueURL == "" {
		// The queue recorded for the plan is out of reach: tasks.json
		// still says how each task stands.
		fmt.Fprintf(stderr, "warning: phases and tokens not shown: %v\n", err)
	} else if err != nil {
		return err
	}
	if st.Checkpointer != nil {
		defer st.close()
		if g, err = readerGraph(st.Checkpointer); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	if !*asJSON {
		fmt.Fprintln(tw, "TASK\tSTATUS\tPHASE\tATTEMPTS\tTOKENS\tTITLE\tNOTE")
	}
	for _, u := range f.Units() {
		t, _ := f.Task(u.ID)
		row := statusJSON{ID: u.ID, Title: t.Title, Status: t.Status, Reason: t.StatusReason, Attempts: t.RetryCount, MaxAttempts: t.Retries()}
		if row.Status == "" {
			row.Status = tasks.StatusPending
		}
		phase, tokens := "-", "-"
		if g != nil {
			if snap, err := g.State(ctx, plan.Thread(u.ID)); err == nil {
				phase, tokens = snap.State.Phase, fmt.Sprint(snap.State.Tokens)
				row.Phase, row.Tokens = snap.State.Phase, snap.State.Tokens
			}
		}
		if *asJSON {
			if err := enc.Encode(row); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\n", printable.String(u.ID), row.Status, phase, row.Attempts, row.MaxAttempts, tokens, clip(t.Title, 40), clip(t.StatusReason, 60))
	}
	return tw.Flush()
}

// statusJSON is one task's line of status --json. Phase and Tokens come
// from the run store; they are empty and 0 for a task that has not run.
type statusJSON struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Status      string `json:"status"`
	Reason      string `json:"reason"`
	Phase       string `json:"phase"`
	Attempts    int    `json:"attempts"`
	MaxAttempts int    `json:"max_attempts"`
	Tokens      int    `json:"tokens"`
}

// historyJSON is the output of history --json: the task's state from its
// last checkpoint, with each attempt's diff when the workspace is there.
type historyJSON struct {
	ID           string        `json:"id"`
	Title        string        `json:"title"`
	Phase        string        `json:"phase"`
	RetryCount   int           `json:"retry_count"`
	MaxRetries   int           `json:"max_retries"`
	Tokens       int           `json:"tokens"`
	Plan         agents.Plan   `json:"plan"`
	Attempts     []attemptJSON `json:"attempts"`
	ErrorHistory []string      `json:"error_history"`
	Warnings     []string      `json:"warnings"`
	Branch       string        `json:"branch,omitempty"`
	Diff         string        `json:"diff,omitempty"`
}

type attemptJSON struct {
	agents.Attempt
	Diff string `json:"diff,omitempty"`
}

func cmdHistory(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("history", stderr)
	var c common
	c.register(fs)
	file := fs.String("file", "tasks.json", "the tasks file")
	noDiff := fs.Bool("no-diff", false, "do not print the diff")
	asJSON := fs.Bool("json", false, "print the history as one JSON object")
	queueURL := fs.String("queue", "", queueReadUsage)
	pos, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("history: give one task id, e.g. statgraph history 3")
	}
	id := pos[0]
	_, plan, store, err := c.paths([]string{*file})
	if err != nil {
		return usageError{err.Error()}
	}
	st, err := openRunStore(ctx, *queueURL, store, plan)
	if err != nil {
		return err
	}
	if st.Checkpointer == nil {
		return usagef("no run store at %s: nothing has run yet (or pass --store, or --queue URL for a run on workers)", store)
	}
	defer st.close()
	g, err := readerGraph(st.Checkpointer)
	if err != nil {
		return err
	}
	snap, err := g.State(ctx, plan.Thread(id))
	if errors.Is(err, statgraph.ErrNoCheckpoint) {
		return usagef("task %s has no recorded run in %s", id, st.where)
	}
	if err != nil {
		return err
	}
	s := snap.State
	var ws *workspace.Workspace
	var pub *workspace.Published // the published branch, once the workspace is removed
	var diffs interface {
		DiffCommit(ctx context.Context, hash string) (string, error)
	}
	if dir := filepath.Join(plan.WorkDir(), id); !*noDiff {
		if _, err := os.Stat(dir); err == nil {
			if ws, err = workspace.Prepare(ctx, workspace.Options{Source: plan.Repo, TaskID: id, Plan: plan.Key, Root: plan.WorkDir()}); err != nil {
				return fmt.Errorf("open workspace of task %s: %w", id, err)
			}
			defer ws.Close()
			diffs = ws
		} else if pub, err = workspace.OpenPublished(plan.Repo, plan.Branch(id)); err == nil {
			diffs = pub
		}
	}
	if *asJSON {
		return printHistoryJSON(ctx, stdout, id, s, ws, pub)
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
		if diffs != nil && a.Commit != "" {
			if d, err := diffs.DiffCommit(ctx, a.Commit); err == nil && d != "" {
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
	switch {
	case ws != nil:
		diff, err := ws.Diff(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\ndiff of branch %s against its base:\n%s", ws.Branch(), diff)
	case pub != nil && len(s.Attempts) > 0 && s.Attempts[0].Commit != "":
		diff, err := pub.Diff(ctx, s.Attempts[0].Commit)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\ndiff of branch %s against its base:\n%s", pub.Branch(), diff)
	}
	return nil
}

// printHistoryJSON prints s, the last checkpointed state of task id, as one
// JSON object; with a workspace ws, or once it is removed the published
// branch pub, each attempt's diff and the branch's.
func printHistoryJSON(ctx context.Context, w io.Writer, id string, s agents.TaskState, ws *workspace.Workspace, pub *workspace.Published) error {
	h := historyJSON{ID: id, Title: s.Task.Title, Phase: s.Phase, RetryCount: s.RetryCount, MaxRetries: s.MaxRetries,
		Tokens: s.Tokens, Plan: s.Plan, Attempts: []attemptJSON{}, ErrorHistory: s.ErrorHistory, Warnings: s.Warnings}
	var diffs interface {
		DiffCommit(ctx context.Context, hash string) (string, error)
	}
	switch {
	case ws != nil:
		diffs = ws
	case pub != nil:
		diffs = pub
	}
	for _, a := range s.Attempts {
		aj := attemptJSON{Attempt: a}
		if diffs != nil && a.Commit != "" {
			if d, err := diffs.DiffCommit(ctx, a.Commit); err == nil {
				aj.Diff = d
			}
		}
		h.Attempts = append(h.Attempts, aj)
	}
	switch {
	case ws != nil:
		d, err := ws.Diff(ctx)
		if err != nil {
			return err
		}
		h.Branch, h.Diff = ws.Branch(), d
	case pub != nil && len(s.Attempts) > 0 && s.Attempts[0].Commit != "":
		d, err := pub.Diff(ctx, s.Attempts[0].Commit)
		if err != nil {
			return err
		}
		h.Branch, h.Diff = pub.Branch(), d
	case pub != nil:
		h.Branch = pub.Branch()
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(h)
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
