package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/internal/printable"
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
	if _, err := load(*file, *tag, stderr); err != nil {
		return err
	}
	// control.Reset takes the lock and first brings a killed run's results
	// journal into the file (a task failed only there can be reset), so
	// that none of its outcomes comes back over the reset.
	c, err := control.Open(control.Options{File: *file, Tag: *tag, Repo: *repo})
	if err != nil {
		return usageError{err.Error()}
	}
	defer c.Close()
	done, err := c.Reset(ids...)
	if err != nil {
		return fmt.Errorf("reset: %w; nothing was changed", err)
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
