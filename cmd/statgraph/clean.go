package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/internal/printable"
	"github.com/statgraph/statgraph/statgraph"
	"github.com/statgraph/statgraph/statgraph/checkpoint/sqlite"
	"github.com/statgraph/statgraph/tasks"
)

// cmdClean removes the workspaces, caches, prompts and checkpoints of
// finished tasks, and what a killed run left (see dispatch.Dispatcher.Clean).
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
	file, plan, store, err := c.paths(pos)
	if err != nil {
		return usageError{err.Error()}
	}
	if err := plan.Check(); err != nil {
		return usageError{err.Error() + "; nothing was changed"}
	}
	f, err := load(file, c.tag, stderr)
	if err != nil {
		return err
	}
	lock, err := tasks.Lock(file)
	if err != nil {
		return usageError{err.Error()}
	}
	defer lock.Unlock()
	if *keep < 0 {
		return usageError{fmt.Sprintf("--keep-checkpoints is %d; give 0 (delete the threads) or more", *keep)}
	}
	// A killed run may have left outcomes only in its results journal: a
	// task done there is finished too, and its workspace can go.
	if err := tasks.SettleJournal(f, plan.Journal()); err != nil {
		return err
	}
	d := &dispatch.Dispatcher{File: f, Repo: plan.Repo}
	var st *sqlite.Store
	if _, err := os.Stat(store); err == nil {
		if st, err = openStore(ctx, store); err != nil {
			return err
		}
		defer st.Close()
		d.Checkpointer = st
	} else {
		d.Checkpointer = statgraph.NewMemoryCheckpointer(false) // no run store: no checkpoints to delete
	}
	res, err := d.CleanKeeping(ctx, *keep)
	for _, u := range f.Units() {
		if n, ok := res.Pruned[u.ID]; ok {
			fmt.Fprintf(stdout, "task %s: deleted %d checkpoint(s), kept the last %d\n", u.ID, n, *keep)
		}
	}
	if st != nil && err == nil && (len(res.Threads) > 0 || len(res.Pruned) > 0) {
		// Deleted rows only free pages inside the file; VACUUM gives them back.
		n, verr := st.Vacuum(ctx)
		if verr != nil {
			err = verr
		} else {
			fmt.Fprintf(stdout, "compacted the run store %s: %s smaller\n", store, humanBytes(n))
			res.Bytes += max(n, 0)
		}
	}
	for _, u := range f.Units() {
		if n, ok := res.Workspaces[u.ID]; ok {
			fmt.Fprintf(stdout, "task %s: removed its workspace (%s)\n", u.ID, humanBytes(n))
		}
		if n, ok := res.Caches[u.ID]; ok {
			fmt.Fprintf(stdout, "task %s: removed its tool caches and prompts (%s)\n", u.ID, humanBytes(n))
		}
	}
	if n, ok := res.Caches[""]; ok {
		fmt.Fprintf(stdout, "removed the caches and prompts of tasks no longer in %s (%s)\n", file, humanBytes(n))
	}
	if len(res.Threads) > 0 {
		fmt.Fprintf(stdout, "deleted the checkpoints of %d finished task(s): %s\n", len(res.Threads), strings.Join(res.Threads, ", "))
	}
	if err == nil {
		// Both, whichever fails: they are independent.
		err = errors.Join(cleanQueueCheckpoints(ctx, stdout, *queueURL, plan, f, *keep), cleanRemote(ctx, stdout, plan, f))
	}
	fmt.Fprintf(stdout, "freed %s; published branches and %s are kept\n", humanBytes(res.Bytes), file)
	return err
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
