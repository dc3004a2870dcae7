package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/statgraph/statgraph/agents/llm"
	"github.com/statgraph/statgraph/control"
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

// openPlan opens the plan of file (validated first, its warnings on
// stderr, so that a bad file reads as it does for run) through control,
// which status, history, mcp and the web UI all read and steer it with; o
// holds the settings of runs it starts. It returns the file as read, for
// control's TasksOf.
func openPlan(c common, file string, o control.Options, stderr io.Writer) (*control.Control, *tasks.File, error) {
	f, err := load(file, c.tag, stderr)
	if err != nil {
		return nil, nil, err
	}
	// load has just read and checked the file: Open need not do it again.
	o.File, o.Tag, o.Repo, o.Store, o.StoreOnly = file, c.tag, c.repo, c.store, true
	ctl, err := control.Open(o)
	if err != nil {
		return nil, nil, usageError{err.Error()}
	}
	return ctl, f, nil
}

// warnQueue reads ctl's tasks once and warns on stderr when the queue
// recorded for the plan by run --queue is out of reach: the workers'
// phases, tokens and histories are then missing from what is served.
func warnQueue(ctx context.Context, ctl *control.Control, stderr io.Writer) {
	if _, err := ctl.Tasks(ctx); err == nil {
		if err := ctl.QueueErr(); err != nil {
			fmt.Fprintf(stderr, "warning: the workers' phases, tokens and histories are not shown: %v\n", err)
		}
	}
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
	file := "tasks.json"
	if len(pos) > 0 {
		file = pos[0]
	}
	ctl, f, err := openPlan(c, file, control.Options{Queue: *queueURL}, stderr)
	if err != nil {
		return err
	}
	defer ctl.Close()
	// Outcomes a run made durable only in its results journal (it is going
	// on, or was killed) count: TasksOf applies them in memory, to the file
	// openPlan has read and checked, so that it is read once.
	units, err := ctl.TasksOf(ctx, f)
	if err != nil {
		return err
	}
	if err := ctl.QueueErr(); err != nil {
		// The queue recorded for the plan is out of reach: tasks.json
		// still says how each task stands.
		fmt.Fprintf(stderr, "warning: phases and tokens not shown: %v\n", err)
	}
	queues, err := control.LandQueuesOf(ctl.Plan(), units)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	if !*asJSON {
		fmt.Fprintln(tw, "TASK\tSTATUS\tPHASE\tATTEMPTS\tTOKENS\tCOST\tTITLE\tNOTE")
	}
	for _, u := range units {
		row := statusJSON{ID: u.ID, Title: u.Title, Status: u.Status, Reason: u.Reason, ParkedUntil: u.ParkedUntil, Phase: u.Phase,
			Attempts: u.Attempt, MaxAttempts: u.MaxAttempts, Tokens: u.Tokens, Usage: u.Usage, CostUSD: u.CostUSD, Land: landOf(queues, u.ID)}
		if *asJSON {
			if err := enc.Encode(row); err != nil {
				return err
			}
			continue
		}
		// A task with no recorded run has no phase: "-" for it, its tokens
		// and its cost.
		phase, tokens, cost := "-", "-", "-"
		if u.Phase != "" {
			phase, tokens, cost = u.Phase, fmt.Sprint(u.Tokens), llm.FormatUSD(u.Usage.CostUSD, u.CostUSD != nil)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\n", printable.String(u.ID), row.Status, phase, row.Attempts, row.MaxAttempts, tokens, cost, clip(u.Title, 40), clip(u.Reason, 60))
	}
	if err := tw.Flush(); err != nil || (*asJSON && *queueURL == "") {
		return err // --json lists workers only when asked with --queue: its readers take each line for a task
	}
	if !*asJSON {
		if err := printLandQueues(stdout, queues); err != nil {
			return err
		}
	}
	workers, err := ctl.Workers(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "warning: the workers are not shown: %v\n", err)
		return nil
	}
	if *asJSON {
		for _, w := range workers {
			if err := enc.Encode(workerJSON{Worker: w}); err != nil {
				return err
			}
		}
		return nil
	}
	return printWorkers(stdout, workers, time.Now())
}

// workerJSON is a line of status --json --queue after the tasks' lines,
// one per worker of the queue, as status's table lists them:
// {"worker": {...}}, so that a reader of task lines (keyed by "id") can
// tell them apart.
type workerJSON struct {
	Worker control.WorkerInfo `json:"worker"`
}

// printWorkers lists the workers of the queue a plan's runs used, after
// status's table; nothing for none.
func printWorkers(w io.Writer, workers []control.WorkerInfo, now time.Time) error {
	if len(workers) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nworkers:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tSTATE\tLAST SEEN\tHOST\tPID\tTASKS IN HAND")
	for _, wi := range workers {
		state := "alive"
		switch {
		case wi.Stopped != nil:
			state = "stopped"
		case !wi.Alive:
			state = "gone"
		}
		var units []string
		for _, u := range wi.Units {
			units = append(units, fmt.Sprintf("%s (%s)", printable.String(u.Unit), u.Limits))
		}
		held := "-"
		if len(units) > 0 {
			held = strings.Join(units, "; ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s ago\t%s\t%d\t%s\n", wi.ID[:8], state, now.Sub(wi.LastSeen).Round(time.Second), printable.String(wi.Host), wi.PID, held)
	}
	return tw.Flush()
}

// statusJSON is one task's line of status --json. Phase, Tokens and Usage
// come from the run store; they are empty and 0 for a task that has not
// run. CostUSD is null when the cost is unknown or the task has not run.
type statusJSON struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Status string `json:"status"`
	Reason string `json:"reason"`
	// ParkedUntil is when a parked task's usage limit resets.
	ParkedUntil *time.Time `json:"parked_until,omitempty"`
	Phase       string     `json:"phase"`
	Attempts    int        `json:"attempts"`
	MaxAttempts int        `json:"max_attempts"`
	Tokens      int        `json:"tokens"`
	Usage       llm.Usage  `json:"usage"`
	CostUSD     *float64   `json:"cost_usd"`
	// Land maps each branch statgraph land ran onto to where the task
	// stands in its queue (dispatch.LandLanded, ...); only for done tasks.
	Land map[string]landJSON `json:"land,omitempty"`
}

// landJSON is where a done task stands in one merge queue.
type landJSON struct {
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
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
	ctl, err := control.Open(control.Options{File: *file, Tag: c.tag, Repo: c.repo, Store: c.store, StoreOnly: true, Queue: *queueURL})
	if err != nil {
		return usageError{err.Error()}
	}
	defer ctl.Close()
	h, err := ctl.History(ctx, id, !*noDiff)
	if qerr := ctl.QueueErr(); qerr != nil {
		// The recorded queue holds the history: say why it was not read.
		return qerr
	}
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(h)
	}
	fmt.Fprintf(stdout, "task %s: %s\nphase %s, %d verification(s) of %d, %d tokens, cost %s\n", printable.String(id), printable.String(h.Title), h.Phase, h.RetryCount, h.MaxRetries, h.Tokens, llm.FormatUSD(h.Usage.CostUSD, h.CostUSD != nil))
	if h.Plan.Summary != "" {
		fmt.Fprintf(stdout, "plan: %s\n", printable.String(h.Plan.Summary))
		for _, step := range h.Plan.Steps {
			fmt.Fprintf(stdout, "  - %s\n", printable.String(step))
		}
	}
	for _, a := range h.Attempts {
		verdict := "FAILED"
		if a.Passed {
			verdict = "passed"
		}
		fmt.Fprintf(stdout, "\nattempt %d  %s  %s  commit %s  %d tokens  cost %s\n  %s\n", a.N, verdict, a.Duration, short(a.Commit),
			a.Usage.Tokens(), llm.FormatUSD(a.Usage.CostUSD, a.Usage.CostKnown()), printable.String(a.Summary))
		if a.NoProgress {
			fmt.Fprintln(stdout, "  no progress: the attempt changed nothing")
		}
		for _, e := range a.Errors {
			fmt.Fprintf(stdout, "  error: %s\n", printable.String(e))
		}
		if a.Diff != "" {
			fmt.Fprintf(stdout, "  diff of this attempt:\n%s\n", indent(printable.Text(a.Diff), "    "))
		}
		if a.Feedback != "" {
			fmt.Fprintf(stdout, "  feedback sent back:\n%s\n", indent(printable.Text(a.Feedback), "    "))
		}
	}
	if h.Selection != nil {
		printCandidates(stdout, h.Selection)
	}
	if len(h.ErrorHistory) > 0 {
		fmt.Fprintf(stdout, "\nerror_history:\n")
		for _, e := range h.ErrorHistory {
			fmt.Fprintf(stdout, "  %s\n", printable.String(e))
		}
	}
	if h.Branch != "" && len(h.Attempts) > 0 && h.Attempts[0].Commit != "" {
		fmt.Fprintf(stdout, "\ndiff of branch %s against its base:\n%s", printable.String(h.Branch), printable.Text(h.Diff))
	}
	if h.Uncommitted != "" {
		fmt.Fprintf(stdout, "\nuncommitted work in the task's workspace:\n%s", printable.Text(h.Uncommitted))
	}
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
	format := fs.String("format", "mermaid", "mermaid, dot or svg")
	if _, err := parse(fs, args, 0); err != nil {
		return err
	}
	g, err := control.ReaderGraph(statgraph.NewMemoryCheckpointer(false))
	if err != nil {
		return err
	}
	out, err := g.Draw(*format)
	if err != nil {
		return usagef("graph: unknown format %q; use mermaid, dot or svg", *format)
	}
	fmt.Fprint(stdout, out)
	return nil
}
