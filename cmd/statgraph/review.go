package main

import (
	"context"
	"fmt"
	"io"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/internal/printable"
)

// comments is a repeatable --comment flag.
type comments []control.Comment

func (c *comments) String() string { return fmt.Sprint(len(*c), " comments") }

func (c *comments) Set(s string) error {
	cm, err := control.ParseComment(s)
	if err != nil {
		return err
	}
	*c = append(*c, cm)
	return nil
}

// cmdReview sends a done task back with review comments on its diff
// (control.Review): the next run makes a new attempt with them as its
// feedback.
func cmdReview(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("review", stderr)
	tag := fs.String("tag", "", "claude-task-master tag to use in a tagged tasks file (default master)")
	file := fs.String("file", "tasks.json", "the tasks file")
	repo := fs.String("repo", "", "git repository the tasks change (default: the tasks file's directory)")
	store := fs.String("store", "", "run store (default: the plan's, under $STATGRAPH_HOME)")
	queueURL := fs.String("queue", "", queueReadUsage)
	var cs comments
	fs.Var(&cs, "comment", "a review comment as file:line:text (or file:12-14:text for a range); repeat it for each comment")
	ids, err := parse(fs, args, 1)
	if err != nil {
		return err
	}
	if len(ids) != 1 || len(cs) == 0 {
		return usagef("review: give one done task and at least one comment, e.g. statgraph review 3 --comment main.go:12:handle the error")
	}
	if _, err := load(*file, *tag, stderr); err != nil {
		return err
	}
	c, err := control.Open(control.Options{File: *file, Tag: *tag, Repo: *repo, Store: *store, Queue: *queueURL})
	if err != nil {
		return usageError{err.Error()}
	}
	defer c.Close()
	if err := c.Review(ctx, ids[0], cs); err != nil {
		return fmt.Errorf("review: %w; nothing was changed", err)
	}
	fmt.Fprintf(stdout, "task %s sent back with %d comment(s): statgraph run makes its new attempt\n", printable.String(ids[0]), len(cs))
	return nil
}
