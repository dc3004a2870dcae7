package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
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
	// Land checks its own sandbox (Dispatcher.Land); the setup checks of
	// a run are about the tasks still to run, which land does not run.
	prep, err := control.Prepare(ctx, control.PrepareOptions{File: file, Tag: c.tag, Plan: plan, StorePath: store, Run: ro, OnWorkers: true,
		Load: func(file, tag string) (*tasks.File, error) { return load(file, tag, stderr) }})
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

// landQueueView is what status shows of the plan's merge queues: target
// branch -> unit -> record.
type landQueueView map[string]map[string]dispatch.LandRecord

// landQueues reads the records of every branch land ran onto.
func landQueues(plan dispatch.Plan) (landQueueView, error) {
	targets, err := dispatch.LandTargets(plan)
	if err != nil {
		return nil, err
	}
	v := landQueueView{}
	for _, t := range targets {
		if v[t], err = dispatch.ReadLanding(plan, t); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// of returns where done unit id stands in each queue: its record, or
// waiting when land has not reached it.
func (v landQueueView) of(id, status string) map[string]landJSON {
	if len(v) == 0 || status != tasks.StatusDone {
		return nil
	}
	out := map[string]landJSON{}
	for t, recs := range v {
		r, ok := recs[id]
		if !ok {
			r.State = dispatch.LandWaiting
		}
		out[t] = landJSON{State: r.State, Reason: r.Reason}
	}
	return out
}

// print writes one table per queue: each done task's state in it.
func (v landQueueView) print(w io.Writer, units []control.TaskInfo) error {
	for _, t := range slices.Sorted(maps.Keys(v)) {
		fmt.Fprintf(w, "\nland onto %s:\n", t)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TASK\tLAND\tNOTE")
		for _, u := range units {
			if st := v.of(u.ID, u.Status); st != nil {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", printable.String(u.ID), st[t].State, clip(st[t].Reason, 80))
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}
