package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"

	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/dispatch"
	"github.com/statgraph/statgraph/internal/printable"
	"github.com/statgraph/statgraph/tasks"
	"github.com/statgraph/statgraph/verifier"
)

// cmdLand lands the done tasks onto a branch, one at a time, each merge
// checked before the branch moves (dispatch.Dispatcher.Land).
func cmdLand(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := newFlags("land", stderr)
	var c common
	c.register(fs)
	var rf runFlags
	rf.register(fs)
	onto := fs.String("onto", "main", "the `BRANCH` to land the done tasks on; it must not be checked out (see docs/cli.md)")
	pos, err := parse(fs, args, 1)
	if err != nil {
		return exitUsage, err
	}
	ro, err := rf.options()
	if err != nil {
		return exitUsage, err
	}
	file, plan, store, err := c.paths(pos)
	if err != nil {
		return exitUsage, usageError{err.Error()}
	}
	ro.Log = stderr
	prep, err := control.PrepareLand(ctx, control.PrepareOptions{File: file, Tag: c.tag, Plan: plan, StorePath: store, Run: ro,
		Load: func(file, tag string) (*tasks.File, error) { return load(file, tag, stderr) }}, *onto)
	if errors.Is(err, dispatch.ErrOntoCheckedOut) {
		return exitUsage, usageError{err.Error()}
	}
	if err != nil {
		return exitCode(err), err
	}
	defer prep.Close()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	d := prep.Dispatcher
	if isTerminal(os.Stdin) {
		d.Ask = askOnTerminal(newProgress(stderr, false, nil), os.Stdin)
	}
	return land(ctx, d, *onto, stdout)
}

// land runs d.Land onto onto, prints what became of each task and returns
// the exit code: 0 when every done task is landed, 1 when one is not, 130
// when interrupted (the branch is at a tip that passed; land again
// finishes).
func land(ctx context.Context, d *dispatch.Dispatcher, onto string, stdout io.Writer) (int, error) {
	l, err := d.Land(ctx, onto)
	printLanding(stdout, l)
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Fprintf(stdout, "land: interrupted; %s is at a tip whose checks passed: run statgraph land again to finish\n", onto)
		return exitInterrupted, nil
	case errors.Is(err, dispatch.ErrOntoCheckedOut), errors.Is(err, verifier.ErrSandboxUnavailable):
		return exitUsage, usageError{err.Error()}
	case err != nil:
		return exitFailed, err
	case l.Failed():
		return exitFailed, nil
	}
	return exitOK, nil
}

// printLanding reports where each done task stands in the queue.
func printLanding(w io.Writer, l dispatch.Landing) {
	if len(l.Units) == 0 && l.Tip == "" {
		return
	}
	fmt.Fprintln(w)
	if len(l.Units) == 0 {
		fmt.Fprintf(w, "land: no task is done; %s stays at %s\n", l.Onto, short(l.Tip))
		return
	}
	for _, u := range l.Units {
		switch {
		case u.Now:
			fmt.Fprintf(w, "land: task %s landed: %s is at %s\n", u.ID, l.Onto, short(u.Commit))
		case u.State == dispatch.LandLanded:
			fmt.Fprintf(w, "land: task %s already landed\n", u.ID)
		default:
			fmt.Fprintf(w, "land: task %s %s: %s\n", u.ID, u.State, printable.String(u.Reason))
		}
	}
	if l.Tip != "" {
		fmt.Fprintf(w, "land: %s is at %s\n", l.Onto, short(l.Tip))
	}
}

// landOf maps each queue of qs to where done unit id stands in it; nil
// for a unit in none.
func landOf(qs []control.LandQueue, id string) map[string]landJSON {
	var out map[string]landJSON
	for _, q := range qs {
		for _, e := range q.Tasks {
			if e.ID == id {
				if out == nil {
					out = map[string]landJSON{}
				}
				out[q.Onto] = landJSON{State: e.State, Reason: e.Reason}
			}
		}
	}
	return out
}

// printLandQueues writes one table per queue: each done task's state in
// it.
func printLandQueues(w io.Writer, qs []control.LandQueue) error {
	for _, q := range qs {
		fmt.Fprintf(w, "\nland onto %s:\n", q.Onto)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TASK\tLAND\tNOTE")
		for _, e := range q.Tasks {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", printable.String(e.ID), e.State, clip(e.Reason, 80))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
