package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/statgraph/statgraph/agents"
	"github.com/statgraph/statgraph/control"
	"github.com/statgraph/statgraph/internal/printable"
)

// cmdPick makes another candidate of a best-of-N task its winner.
func cmdPick(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("pick", stderr)
	var c common
	c.register(fs)
	file := fs.String("file", "tasks.json", "the tasks file")
	pos, err := parse(fs, args, 2)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("pick: give a task id and a candidate number, e.g. statgraph pick 3 2 (statgraph history 3 lists the candidates)")
	}
	k, err := strconv.Atoi(pos[1])
	if err != nil || k < 1 {
		return usagef("pick: candidate %q is not a number from 1 up; statgraph history %s lists the candidates", pos[1], pos[0])
	}
	if _, err := load(*file, c.tag, stderr); err != nil {
		return err
	}
	ctl, err := control.Open(control.Options{File: *file, Tag: c.tag, Repo: c.repo, Store: c.store})
	if err != nil {
		return usageError{err.Error()}
	}
	defer ctl.Close()
	sel, err := ctl.Pick(ctx, pos[0], k)
	if err != nil {
		return fmt.Errorf("pick: %w; nothing was changed", err)
	}
	fmt.Fprintf(stdout, "task %s: candidate %d is the winner; %s is at its commit\n", printable.String(pos[0]), sel.Winner, printable.String(ctl.Plan().Branch(pos[0])))
	printCandidates(stdout, &sel)
	return nil
}

// printCandidates prints a best-of-N task's candidates side by side, the
// winner marked, and the judge's rounds.
func printCandidates(w io.Writer, sel *agents.Selection) {
	fmt.Fprintf(w, "\ncandidates (winner %d: %s):\n", sel.Winner, printable.String(sel.Why))
	fmt.Fprintf(w, "  %-3s %-3s %-11s %-8s %-8s %-6s %-9s %s\n", "", "k", "status", "warnings", "diff", "tries", "tokens", "branch")
	for _, c := range sel.Candidates {
		mark := ""
		if c.K == sel.Winner {
			mark = "*"
		}
		fmt.Fprintf(w, "  %-3s %-3d %-11s %-8d %-8d %-6d %-9d %s\n", mark, c.K, c.Status, c.Warnings, c.DiffLines, c.Attempts, c.Tokens, printable.String(c.Branch))
		who := c.Executor
		if c.Model != "" {
			who += " " + c.Model
		}
		fmt.Fprintf(w, "          %s", printable.String(who))
		if c.Reason != "" {
			fmt.Fprintf(w, ": %s", printable.String(c.Reason))
		}
		fmt.Fprintln(w)
	}
	for _, r := range sel.Judge {
		if r.A == 0 {
			fmt.Fprintf(w, "  judge: %s\n", printable.String(r.Reasoning))
			continue
		}
		fmt.Fprintf(w, "  judge: %d vs %d -> %d: %s\n", r.A, r.B, r.Winner, printable.String(r.Reasoning))
	}
}
