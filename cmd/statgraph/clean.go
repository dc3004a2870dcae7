package main

import (
	"context"
	"fmt"
	"github.com/statgraph/statgraph/dispatch"
	"io"
	"strings"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/internal/printable"
	"github.com/statgraph/statgraph/tasks"
)

// cmdClean removes the workspaces, caches, prompts and checkpoints of
// finished tasks, and what a killed run left (see control.Control.Clean).
func cmdClean(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("clean", stderr)
	var c common
	c.register(fs)
	keep := fs.Int("keep-checkpoints", 0, "keep the last `N` checkpoints of each finished task's thread instead of deleting it (0: delete)")
	queueURL := fs.String("queue", "", "Postgres `URL` of the queue a run on workers used: delete the finished tasks' checkpoints the workers keep there too (default: the queue recorded for the plan by run --queue)")
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
	res, err := ctl.Clean(ctx, *keep)
	printCleaned(stdout, file, f, res, *keep)
	return err
}

// printCleaned reports what clean removed, task by task in the file's
// order.
func printCleaned(w io.Writer, file string, f *tasks.File, res control.Cleaned, keep int) {
	units := f.Units()
	for _, u := range units {
		if n, ok := res.Pruned[u.ID]; ok {
			fmt.Fprintf(w, "task %s: deleted %d checkpoint(s), kept the last %d\n", u.ID, n, keep)
		}
	}
	if res.Compacted {
		fmt.Fprintf(w, "compacted the run store %s: %s smaller\n", res.Store, humanBytes(res.Freed))
	}
	for _, u := range units {
		if n, ok := res.Workspaces[u.ID]; ok {
			fmt.Fprintf(w, "task %s: removed its workspace (%s)\n", u.ID, humanBytes(n))
		}
		if n, ok := res.Caches[u.ID]; ok {
			fmt.Fprintf(w, "task %s: removed its tool caches and prompts (%s)\n", u.ID, humanBytes(n))
		}
	}
	if n, ok := res.Caches[""]; ok {
		fmt.Fprintf(w, "removed the caches and prompts of tasks no longer in %s (%s)\n", file, humanBytes(n))
	}
	if len(res.Threads) > 0 {
		fmt.Fprintf(w, "deleted the checkpoints of %d finished task(s): %s\n", len(res.Threads), strings.Join(res.Threads, ", "))
	}
	for _, u := range units {
		if n, ok := res.Queue.Pruned[u.ID]; ok {
			fmt.Fprintf(w, "task %s: deleted %d checkpoint(s) in %s, kept the last %d\n", u.ID, n, res.Queue.Where, keep)
		}
	}
	if len(res.Queue.Threads) > 0 {
		fmt.Fprintf(w, "deleted the checkpoints of %d finished task(s) in %s: %s\n", len(res.Queue.Threads), res.Queue.Where, strings.Join(res.Queue.Threads, ", "))
	}
	if len(res.WIP) > 0 {
		fmt.Fprintf(w, "deleted the work-in-progress branches of %d finished task(s) on %s: %s\n", len(res.WIP), res.Remote, strings.Join(res.WIP, ", "))
	}
	fmt.Fprintf(w, "freed %s; published branches and %s are kept\n", humanBytes(res.Bytes), file)
}

// humanBytes shows n bytes as B, kB or MB.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// printIntegration reports what --integrate did, task by task.
func printIntegration(w io.Writer, in dispatch.Integration) {
	fmt.Fprintln(w)
	if len(in.Units) == 0 {
		fmt.Fprintln(w, "integration: no task is done; nothing to integrate")
		return
	}
	for _, u := range in.Units {
		switch {
		case u.Merged:
			fmt.Fprintf(w, "integration: task %s (%s) merged\n", u.ID, u.Branch)
		case len(u.Conflicts) > 0:
			fmt.Fprintf(w, "integration: task %s (%s) left out: conflicts in %s with the tasks merged before it\n", u.ID, u.Branch, printable.String(strings.Join(u.Conflicts, ", ")))
		default:
			fmt.Fprintf(w, "integration: task %s left out: %s\n", u.ID, printable.String(u.Note))
		}
	}
	for _, c := range in.Checks {
		fmt.Fprintf(w, "integration check %s\n", c.Summary())
	}
	if in.Branch != "" {
		fmt.Fprintf(w, "integration published as branch %s\n", in.Branch)
	}
}
