package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/statgraph/statgraph/internal/printable"
	"github.com/statgraph/statgraph/tasks"
)

// cmdReset sends failed or blocked tasks back to pending in the tasks file,
// under its lock, so the next run takes them up again.
func cmdReset(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("reset", stderr)
	tag := fs.String("tag", "", "claude-task-master tag to use in a tagged tasks file (default master)")
	file := fs.String("file", "tasks.json", "the tasks file")
	repo := fs.String("repo", "", "git repository the tasks change (default: the tasks file's directory)")
	ids, err := parse(fs, args, 1<<20)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return usagef("reset: give the ids of the failed or blocked tasks to send back to pending, e.g. statgraph reset 3 4.2 (or use statgraph run --retry-failed)")
	}
	f, err := load(*file, *tag, stderr)
	if err != nil {
		return err
	}
	lock, err := tasks.Lock(*file)
	if err != nil {
		return usageError{err.Error()}
	}
	defer lock.Unlock()
	// A killed run may have left outcomes only in its results journal:
	// they go into the file first (a task failed there can be reset), and
	// the journal is emptied so that none of them comes back over the reset.
	dir := *repo
	if dir == "" {
		dir = filepath.Dir(*file)
	}
	plan, err := tasks.NewPlan(dir, *file, *tag)
	if err != nil {
		return usageError{err.Error()}
	}
	if err := tasks.SettleJournal(f, plan); err != nil {
		return err
	}
	done, err := f.Reset(ids...)
	switch {
	case errors.Is(err, tasks.ErrNoTask) || errors.Is(err, tasks.ErrNotResettable):
		return usagef("reset: %s; nothing was changed (statgraph status %s lists the tasks)", strings.TrimPrefix(err.Error(), "tasks: "), *file)
	case err != nil:
		return err
	}
	if err := f.Save(); err != nil {
		return err
	}
	reportReset(stdout, done)
	return nil
}

// reportReset says which tasks went back to pending.
func reportReset(w io.Writer, ids []string) {
	if len(ids) == 0 {
		return
	}
	fmt.Fprintf(w, "back to pending (their attempts stay in the run store): %s\n", printable.String(strings.Join(ids, ", ")))
}
